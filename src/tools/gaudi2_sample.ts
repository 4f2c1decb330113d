/**
 * The bundled Habana sample, built deterministically: a small MLP trained for a few steps on one Gaudi2 card, as the
 * Gaudi PyTorch bridge shows it through Kineto (Kineto-style HPU events), then written as the HPU collector's dump by
 * src/tools/kineto_to_synapse.ts. Each step: the input batch copied host → device on a PDMA engine, three recipes
 * (forward, backward, optimizer) launched by `synLaunchWithExternalEvents` calls (enqueueWithExternalEvents) on the
 * host, each running MME matmuls and TPC elementwise/reduction kernels spread over ten TPC engines, EDMA copies and memsets,
 * and SPMU counter samples; a `synStreamSynchronize` host call ends the step. Names, engines and sizes follow a Gaudi2
 * (24 TPC, 2 MME, PDMA/EDMA); the durations are synthetic, from a fixed seed.
 *
 *   tsx src/tools/gaudi2_sample.ts -o samples/gaudi2_mlp_synapse.rawtrace [--steps N]
 */
import { writeFileSync } from "node:fs";
import { rng } from "./rng.js";
import { runIfMain, type KinetoEvent, type KinetoTrace } from "./kineto_to_rawtrace.js";
import { kinetoToSynapse, type SynapseOptions } from "./kineto_to_synapse.js";

/** Host process id of the sample. */
export const SAMPLE_PID = 31337;
/** Lanes (the bridge's line numbers: prefix index × 1000 + engine index). */
const TPC = (i: number) => 7000 + i;
const MME = (i: number) => 6000 + i;
const PDMA = (i: number) => 3000 + i;
const EDMA = (i: number) => 4000 + i;
/**
 * TPC engines the sample's kernels use (of a Gaudi2's 24): with 2 MME, 1 PDMA and 2 EDMA lanes a device has 15 lines,
 * under the 16 per plane past which XProf 2.24 runs out of derived line ids (docs/decoders/hpu.md).
 */
const TPC_USED = 10;

/** The Kineto-style trace of the sample (`steps` training steps, seed fixed). */
export function gaudi2SampleTrace(steps = 4, seed = 0x6a2d1): KinetoTrace {
  const r = rng(seed);
  const ev: KinetoEvent[] = [];
  const us = (ns: number) => (ns / 1000).toFixed(3);
  let t = 1_000_000; // ns after the base
  const host = (name: string, tid: number, dur: number, args: Record<string, unknown> = {}) => {
    ev.push({ ph: "X", cat: "hpu_op", name, pid: SAMPLE_PID, tid, ts: us(t), dur: us(dur), args });
  };
  const dev = (cat: string, name: string, lane: number, start: number, dur: number, args: Record<string, unknown>) => {
    ev.push({ ph: "X", cat, name, pid: 0, tid: lane, ts: us(start), dur: us(dur), args });
  };
  const layers = [[1024, 4096], [4096, 4096], [4096, 1024]];
  let stream = 0x7f3a_1000_0000n;
  for (let s = 0; s < steps; s++) {
    // Input batch H2D on a PDMA engine.
    host("synHostMap", 1, 3_000 + Math.round(r() * 1_000));
    t += 4_000;
    const copyStart = t + 2_000;
    host("synMemCopyAsync", 1, 6_000, { recipeId: 0 });
    dev("gpu_memcpy", "memcpy_host_to_device", PDMA(0), copyStart, 40_000 + Math.round(r() * 5_000), { bytes_moved: 8388608 });
    t += 8_000;
    for (const phase of ["fwd", "bwd", "opt"]) {
      const rid = ["fwd", "bwd", "opt"].indexOf(phase) + 1; // the recipes are compiled once and launched every step
      const rname = `mlp_${phase}_graph`;
      stream += 0x40n;
      const launchArgs = { recipeId: rid, recipeName: rname, streamHandle: `0x${stream.toString(16)}`, eventHandle: `0x${(stream + 8n).toString(16)}` };
      const launchDur = 25_000 + Math.round(r() * 10_000);
      host("synLaunchWithExternalEvents enqueueWithExternalEvents", 1, launchDur, launchArgs);
      let d = t + launchDur - 5_000;
      t += launchDur + 2_000;
      const ops = phase === "opt" ? 2 : layers.length;
      for (let l = 0; l < ops; l++) {
        const [k, n] = layers[phase === "bwd" ? layers.length - 1 - l : l];
        const mmDur = Math.round((k * n) / 600 + r() * 2_000);
        const common = { recipeId: rid, recipeName: rname, dataType: "bf16" };
        if (phase !== "opt") {
          dev("kernel", phase === "fwd" ? `matmul_fwd_bf16_${k}x${n}` : `matmul_dx_bf16_${n}x${k}`, MME(0), d, mmDur,
            { ...common, node: `linear_${l}`, flops: 2 * 256 * k * n, utilization: Math.round(r() * 1000) / 1000 });
          if (phase === "bwd") dev("kernel", `matmul_dw_bf16_${k}x${n}`, MME(1), d, mmDur, { ...common, node: `linear_${l}_dw` });
          d += mmDur + 500;
        }
        const tpcOps = phase === "fwd" ? ["add_fwd_bf16", "relu_fwd_bf16"] : phase === "bwd" ? ["relu_bwd_bf16", "reduce_sum_fwd_bf16"] : ["adamw_bf16", "cast_f32_to_bf16"];
        for (const op of tpcOps) {
          const width = 4 + Math.floor(r() * (TPC_USED - 4)); // one kernel per engine at a time
          const dur = 3_000 + Math.round(r() * 4_000);
          for (let e = 0; e < width; e++) dev("kernel", op, TPC((e * 3 + l) % TPC_USED), d + e * 150, dur, { ...common, node: `${op}_${l}` });
          d += dur + width * 150;
        }
      }
      if (phase === "opt") {
        // Gradient-norm clipping: one reduction on a single TPC before the update.
        const dur = 2_500 + Math.round(r() * 1_000);
        dev("kernel", "global_norm_reduce_f32", TPC(0), d, dur, { recipeId: rid, recipeName: rname, dataType: "f32", node: "clip_grad_norm" });
        d += dur + 300;
      }
      if (phase === "bwd") {
        dev("gpu_memset", "memset_grad_buffer", EDMA(0), d, 6_000, { recipeId: rid, recipeName: rname });
        dev("gpu_memcpy", "memcpy_dram_to_dram", EDMA(1), d + 1_000, 12_000, { recipeId: rid, recipeName: rname });
        d += 13_000;
      }
      ev.push({ ph: "C", name: "spmu_hbm_read_bytes", pid: 0, tid: 0, ts: us(d), args: { value: Math.round(r() * 1e9) } });
      ev.push({ ph: "C", name: "spmu_tpc_active_cycles", pid: 0, tid: 0, ts: us(d), args: { value: Math.round(r() * 5e6) } });
      if (d > t) t = d;
    }
    host("synStreamSynchronize", 1, 5_000);
    t += 30_000;
  }
  const meta: KinetoEvent[] = [
    { ph: "M", name: "thread_name", pid: SAMPLE_PID, tid: 1, args: { name: "Synapse/Thread 1" } },
    ...Array.from({ length: 24 }, (_, i) => ({ ph: "M", name: "thread_name", pid: 0, tid: TPC(i), args: { name: `TPC${i}` } })),
    { ph: "M", name: "thread_name", pid: 0, tid: MME(0), args: { name: "MME0" } },
    { ph: "M", name: "thread_name", pid: 0, tid: MME(1), args: { name: "MME1" } },
    { ph: "M", name: "thread_name", pid: 0, tid: PDMA(0), args: { name: "PDMA0" } },
    { ph: "M", name: "thread_name", pid: 0, tid: PDMA(1), args: { name: "PDMA1" } },
    { ph: "M", name: "thread_name", pid: 0, tid: EDMA(0), args: { name: "EDMA0" } },
    { ph: "M", name: "thread_name", pid: 0, tid: EDMA(1), args: { name: "EDMA1" } },
  ];
  return {
    baseTimeNanoseconds: "1779840000000000000",
    deviceProperties: [{ id: 0, name: "GAUDI2", totalGlobalMem: 102106132480 }],
    traceEvents: [...meta, ...ev],
  };
}

/** Options the bundled sample is written with: 'X' entries, periodic pulls of 300 entries (plus the metadata). */
export const SAMPLE_OPTIONS: SynapseOptions = { perPull: 300 };

/** The sample file's bytes. */
export function gaudi2Sample(steps = 4): Uint8Array {
  return kinetoToSynapse(gaudi2SampleTrace(steps), SAMPLE_OPTIONS).bytes;
}

function main(argv: string[]): number {
  let out: string | undefined;
  let steps = 4;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "-o") out = argv[++i];
    else if (argv[i] === "--steps") steps = Number(argv[++i]);
    else throw new Error(`unexpected argument ${argv[i]}`);
  }
  if (!out) throw new Error("usage: tsx src/tools/gaudi2_sample.ts -o out.rawtrace [--steps N]");
  const b = gaudi2Sample(steps);
  writeFileSync(out, b);
  console.log(`${out}: ${b.length} bytes`);
  return 0;
}

runIfMain(import.meta.url, "gaudi2_sample", main);
