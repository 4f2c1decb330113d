/**
 * Theoretical occupancy of a kernel launch (cudaOccMaxActiveBlocksPerMultiprocessor and
 * cudaOccMaxPotentialOccupancyBlockSize) from the session's device table: the `theoretical_occupancy_pct`,
 * `occupancy_min_grid_size` and `occupancy_suggested_block_size` stats of XSpace kernels (and the timeline's).
 */
import * as S from "../model/session";

/**
 * Plausibility limits of the device-table fields the occupancy calculation uses. Real GPUs are far inside them
 * (warp 32 or 64, ≤ 1024 threads per block, ≤ 2048 per SM, ≤ 256 SMs); a damaged or crafted table beyond them gets
 * no occupancy (all three stats 0, `occ_pct:0`), so no arithmetic below can divide by zero, overflow or loop long.
 */
const OCC_MAX_WARP: u32 = 1024;
const OCC_MAX_THREADS_PER_BLOCK: u32 = 1 << 16;
const OCC_MAX_THREADS_PER_SM: u32 = 1 << 20;
const OCC_MAX_SMS: u32 = 1 << 16;
/** Most block sizes (multiples of the warp size) tried for the suggested block size. */
const OCC_MAX_BLOCK_SIZES: u32 = 1024;

/** Whether device entry `d` holds what the occupancy calculation needs, within {@link OCC_MAX_WARP} & co. */
export function occPlausible(d: usize): bool {
  if (d == 0) return false;
  const warp = load<u32>(d, 52);
  const maxThreadsBlock = load<u32>(d, 36);
  const maxThreadsSM = load<u32>(d, 40);
  return load<u32>(d, 28) != 0 && warp != 0 && warp <= OCC_MAX_WARP &&
    maxThreadsSM != 0 && maxThreadsSM <= OCC_MAX_THREADS_PER_SM &&
    maxThreadsBlock != 0 && maxThreadsBlock <= OCC_MAX_THREADS_PER_BLOCK &&
    maxThreadsBlock / warp <= OCC_MAX_BLOCK_SIZES && load<u32>(d, 4) <= OCC_MAX_SMS;
}

/**
 * Active blocks per SM of a launch (≤ max threads per SM / block size), or 0 when the launch does not fit. `d`
 * must pass {@link occPlausible}; products are taken in 64 bits.
 */
export function activeBlocks(d: usize, regs: u32, staticSmem: u32, dynSmem: u32, block: u32): u32 {
  const warp = <u64>load<u32>(d, 52);
  const maxThreadsSM = <u64>load<u32>(d, 40);
  const maxThreadsBlock = load<u32>(d, 36);
  if (block == 0 || block > maxThreadsBlock) return 0;
  const major = load<u32>(d, 28);
  const warpsPerBlock = (<u64>block + warp - 1) / warp; // ≥ 1
  let limit = (maxThreadsSM / warp) / warpsPerBlock;
  let maxBlocks = <u64>load<u32>(d, 68);
  if (maxBlocks == 0) maxBlocks = major >= 9 || (major == 8 && load<u32>(d, 32) == 0) ? 32 : 16;
  if (maxBlocks < limit) limit = maxBlocks;
  // Registers: allocated per warp in units of 256, from 4 sub-partitions of the SM's register file.
  if (regs > 0) {
    if (regs > 255) return 0;
    const regsPerWarp = ((<u64>regs * warp + 255) / 256) * 256; // ≥ 256
    const regsPerBlock = <u64>load<u32>(d, 44);
    if (regsPerBlock != 0 && regsPerWarp * warpsPerBlock > regsPerBlock) return 0;
    const regsSM = <u64>load<u32>(d, 48);
    if (regsSM != 0) {
      const warpsSM = ((regsSM / 4) / regsPerWarp) * 4;
      const byRegs = warpsSM / warpsPerBlock;
      if (byRegs < limit) limit = byRegs;
    }
  }
  // Shared memory: static + dynamic + the per-block system reservation (1 KiB from compute capability 8.0), in
  // allocation units of 128 B (8.0+) or 256 B.
  const perBlockMax = dynSmem > load<u32>(d, 56) && load<u32>(d, 64) != 0 ? load<u32>(d, 64) : load<u32>(d, 56);
  const smem = <u64>staticSmem + <u64>dynSmem;
  if (perBlockMax != 0 && smem > <u64>perBlockMax) return 0;
  const reserved: u64 = major >= 8 ? 1024 : 0;
  const gran: u64 = major >= 8 ? 128 : 256;
  const smemSM = <u64>load<u32>(d, 60);
  if (smem + reserved > 0 && smemSM != 0) {
    const per = ((smem + reserved + gran - 1) / gran) * gran;
    const bySmem = smemSM / per;
    if (bySmem < limit) limit = bySmem;
  }
  return <u32>limit;
}

/**
 * Writes the occupancy entry at `o` (16 bytes: {pct f64, minGridSize i32, suggestedBlockSize i32}; all 0 when the
 * device table lacks a field the calculation needs or holds implausible values, {@link occPlausible}); returns `o`.
 */
export function occupancy(o: usize, d: usize, regs: u32, staticSmem: u32, dynSmem: u32, block: u32): usize {
  store<f64>(o, 0);
  store<i32>(o, 0, 8);
  store<i32>(o, 0, 12);
  // NVIDIA's register and shared-memory allocation rules: other makers' GPUs get 0, as XLA's ROCm tracer writes
  // (occ_pct:0) and as the Chrome JSON leaves them out. Before 2026-12-03 an MI250's kernels read 100 % in XProf.
  if (S.deviceMaker != "Nvidia" || !occPlausible(d)) return o;
  const maxThreadsSM = <u64>load<u32>(d, 40);
  const active = activeBlocks(d, regs, staticSmem, dynSmem, block);
  store<f64>(o, <f64>active * <f64>block * 100.0 / <f64>maxThreadsSM);
  // Best block size: the largest multiple of the warp size with the most resident threads.
  const warp = load<u32>(d, 52);
  let best: u32 = 0;
  let bestBlocks: u64 = 0;
  let bestThreads: u64 = 0;
  let b = (load<u32>(d, 36) / warp) * warp;
  while (b > 0) {
    const blocks = <u64>activeBlocks(d, regs, staticSmem, dynSmem, b);
    if (blocks * b > bestThreads) {
      bestThreads = blocks * b;
      best = b;
      bestBlocks = blocks;
    }
    if (bestThreads == maxThreadsSM) break;
    b -= warp;
  }
  // ≤ 2^20 blocks per SM × ≤ 2^16 SMs: clamped to the i32 the entry holds.
  const grid = bestBlocks * <u64>load<u32>(d, 4);
  store<i32>(o, grid > 0x7fffffff ? 0x7fffffff : <i32>grid, 8);
  store<i32>(o, <i32>best, 12);
  return o;
}
