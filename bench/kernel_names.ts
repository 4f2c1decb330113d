/**
 * Kernel-name pool of the benchmark generator: real Itanium manglings of PyTorch/CUTLASS/flash-attention-shaped
 * templates (produced with g++ from our own declarations) plus unmangled Triton/NCCL/CUTLASS names, as CUPTI
 * delivers them.
 */
export const KERNEL_NAMES: readonly string[] = [
  "_Z31cudnn_bn_fw_tr_1C11_kernel_NCHWIfEvPT_S1_fi",
  "_Z31sm90_xmma_gemm_bf16bf16_bf16f32IN2at8BFloat16ELi128ELi256ELi64EEvPKT_S4_PS2_iii",
  "_Z31sm90_xmma_gemm_bf16bf16_bf16f32IfLi64ELi128ELi32EEvPKT_S2_PS0_iii",
  "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LLi",
  "_ZN2at6native12_GLOBAL__N_120softmax_warp_forwardINS_8BFloat16ELi2EEEvPT_PKS4_iii",
  "_ZN2at6native12_GLOBAL__N_120softmax_warp_forwardIfLi4EEEvPT_PKS3_iii",
  "_ZN2at6native13reduce_kernelINS_4HalfEflEEvPT_PT0_T1_",
  "_ZN2at6native13reduce_kernelIffjEEvPT_PT0_T1_",
  "_ZN2at6native18elementwise_kernelILi128ELi4ENS0_11FillFunctorIlEEEEviT1_",
  "_ZN2at6native18elementwise_kernelILi512ELi1ENS0_10MulFunctorIdEEEEviT1_",
  "_ZN2at6native21indexSelectLargeIndexIfjLi2EEEvPT_PKS2_PT0_S6_S6_",
  "_ZN2at6native29vectorized_elementwise_kernelILi2ENS0_10MulFunctorINS_8BFloat16EEENS_6detail5ArrayIPcLi3EEEEEviT0_T1_",
  "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AddFunctorINS_4HalfEEENS_6detail5ArrayIPcLi3EEEEEviT0_T1_",
  "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_",
  "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctorIfNS0_10AddFunctorIfEEEENS_6detail5ArrayIPcLi3EEEEEviT0_T1_",
  "_ZN5flash16flash_fwd_kernelINS_23Flash_fwd_kernel_traitsELb0ELb1EEEvf",
  "_ZN5flash16flash_fwd_kernelINS_23Flash_fwd_kernel_traitsELb1ELb0EEEvf",
  "_ZN7cutlass7Kernel2INS_16GemmParamsHolderEEEvNT_6ParamsE",
  "triton_poi_fused_add_cos_sin_0",
  "triton_red_fused__softmax_1",
  "triton_per_fused_native_layer_norm_2",
  "ncclKernel_AllReduce_RING_LL_Sum_float",
  "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4",
];
