/**
 * The fuzz-case runner shared by the vendor decoder fuzz tests (test/fuzz/fuzz_pti.test.ts, fuzz_rocm.test.ts):
 * mutates a fixed list of seed dumps with test/fuzz/mutate.ts (a second mutation on ~30% of runs), converts every
 * mutant to Chrome JSON (and every third to XSpace) and checks it either converts to finite, non-negative complete
 * events and an XSpace with a `/host:CPU` plane, or fails with a documented fatal error whose message names an offset.
 * Anything else fails the calling test.
 */
import * as assert from "uvu/assert";
import { fromBinary } from "@bufbuild/protobuf";
import { mutate, rng, STRATEGIES } from "../fuzz/mutate.js";
import { toChrome } from "./convert.js";
import { FATAL_NAMES } from "../../src/core/codes.js";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource } from "../../src/core/engine.js";

/** What a vendor fuzz run did. */
export interface VendorFuzzResult {
  /** Mutants that converted (the rest failed cleanly). */
  converted: number;
  /** Clean fatal errors, by error name. */
  errors: Record<string, number>;
  /** Runs per mutation strategy (of test/fuzz/mutate.ts STRATEGIES). */
  perStrategy: Record<string, number>;
}

/**
 * Runs `runs` mutated dumps (seed dumps taken in turn, PRNG seeded with `seed`) through the oracle above, logs a
 * one-line summary tagged `label`, and asserts that more than half converted and that every strategy ran.
 */
export async function fuzzVendorDumps(
  label: string, seeds: Uint8Array[], runs: number, seed: number,
): Promise<VendorFuzzResult> {
  const r = rng(seed);
  const eng = await createEngine();
  const errors: Record<string, number> = {};
  const perStrategy: Record<string, number> = {};
  let converted = 0;
  for (let run = 0; run < runs; run++) {
    let { bytes, strategy } = mutate(seeds[run % seeds.length], r);
    if (r() < 0.3) bytes = mutate(bytes, r).bytes;
    perStrategy[strategy] = (perStrategy[strategy] ?? 0) + 1;
    try {
      const { trace: t } = await toChrome(bytes);
      for (const e of t.traceEvents) {
        if (e.ph === "X") assert.ok(Number.isFinite(e.ts) && Number.isFinite(e.dur) && e.dur >= 0, `finite ts/dur (${strategy})`);
      }
      if (run % 3 === 0) {
        const parts: Buffer[] = [];
        await eng.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
        assert.ok(fromBinary(XSpaceSchema, Buffer.concat(parts)).planes.some((p) => p.name === "/host:CPU"), `XSpace (${strategy})`);
      }
      converted++;
    } catch (e: any) {
      if (e.code === "ERR_ASSERTION" || e.name === "Assertion") throw e;
      assert.ok((FATAL_NAMES as readonly string[]).includes(e.name), `${strategy}: unexpected ${e.name}: ${e.message}`);
      assert.match(e.message, /offset \d+/);
      errors[e.name] = (errors[e.name] ?? 0) + 1;
    }
  }
  console.log(`fuzz ${label}: ${runs} runs, ${converted} converted, clean errors ${JSON.stringify(errors)}`);
  assert.ok(converted > runs / 2);
  assert.is(Object.keys(perStrategy).length, STRATEGIES.length, "every strategy ran");
  return { converted, errors, perStrategy };
}
