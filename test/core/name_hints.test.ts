/**
 * Hints for names shown alike (src/core/name_hints.ts): the viewer's short names of the real ROCm sample's kernels
 * (PyTorch on an MI250) and the CLI's 120-character cuts of PyTorch's optimizer kernels (the H100 fixture): each name
 * of a group gets a word only it has; names alone in their group get none.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { nameHints } from "../../src/core/name_hints.js";
import { shortName } from "../../web/model.js";

/** Kernel names of the MI250 sample's PyTorch step (and a Tensile GEMM), as the decoder demangles them. */
const [clamp, mse, fill, mean, sum, gemm] = [
  "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, float, at::detail::Array<char*, 2>)",
  "void at::native::vectorized_elementwise_kernel<4, at::native::mse_kernel_cuda(at::TensorIteratorBase&)::{lambda()#1}::operator()() const::{lambda()#2}::operator()() const::{lambda(float, float)#1}, at::detail::Array<char*, 3> >(int, float, at::detail::Array<char*, 3>)",
  "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
  "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>)",
  "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4>)",
  "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32",
];

test("kernels sharing a short name: a word of its template arguments only it has; a name alone: none", () => {
  assert.equal(nameHints([clamp, mse, fill, mean, sum, gemm], shortName), ["launch_clamp_scalar", "mse_kernel_cuda", "FillFunctor", "MeanOps", "sum_functor", null]);
  // The same hints whatever the order.
  assert.equal(nameHints([gemm, sum, mean, fill, mse, clamp], shortName), [null, "sum_functor", "MeanOps", "FillFunctor", "mse_kernel_cuda", "launch_clamp_scalar"]);
});

test("names that differ only in numbers: their template arguments themselves", () => {
  const a = "void at::native::elementwise_kernel<128, 2, Op>(int)";
  const b = "void at::native::elementwise_kernel<128, 4, Op>(int)";
  assert.equal(nameHints([a, b], shortName), ["128, 2, Op", "128, 4, Op"]);
  assert.equal(nameHints(["k", "k2"], shortName), [null, null]);
});

test("names cut alike for a text table (PyTorch's optimizer kernels share their first 120 characters): the word each alone has", () => {
  const mta = (args: string) => `void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<1>, ${args}>(int)`;
  const mul = mta("at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::multiplies<float>, float");
  const add = mta("at::native::(anonymous namespace)::BinaryOpScalarFunctor<float, 1, 1, 0>, std::plus<float>, float");
  const sqrt = mta("at::native::(anonymous namespace)::UnaryOpFunctor<float, 2, 1, 1>, at::native::Sqrt<float>");
  const cut = (n: string) => n.slice(0, 119);
  assert.is(new Set([mul, add, sqrt].map(cut)).size, 1, "the three cut alike");
  assert.equal(nameHints([mul, add, sqrt], cut), ["multiplies", "plus", "UnaryOpFunctor"]);
});

test.run();
