import { test } from "uvu";
import * as assert from "uvu/assert";
import { toChrome } from "../helpers/convert.js";
import { sampleDump } from "../helpers/sample_dump.js";
import { mutate, rng, STRATEGIES } from "./mutate.js";
import { FATAL_NAMES } from "../../src/core/codes.js";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource } from "../../src/core/engine.js";

/** Time budget of the CI fuzz run (ms) and its fixed seed; `npm run fuzz` runs longer with other seeds. */
const BUDGET_MS = Number(process.env.RAWTRACE_FUZZ_MS ?? 20000);
const SEED = Number(process.env.RAWTRACE_FUZZ_SEED ?? 20261122);

test(`fuzz: mutated dumps convert to valid JSON or fail with a clean error (seed ${SEED}, ${BUDGET_MS} ms)`, async () => {
  const seeds = [sampleDump({ layout: "cuda13" }), sampleDump({ layout: "cuda12" }), sampleDump({ end: false })];
  const r = rng(SEED);
  const t0 = performance.now();
  let runs = 0;
  let converted = 0;
  let xspaces = 0;
  let hostParts = 0;
  const eng = await createEngine();
  const errors: Record<string, number> = {};
  const perStrategy: Record<string, number> = {};
  while (performance.now() - t0 < BUDGET_MS) {
    const base = seeds[runs % seeds.length];
    let { bytes, strategy } = mutate(base, r);
    // Stack a few mutations sometimes.
    if (r() < 0.3) bytes = mutate(bytes, r).bytes;
    runs++;
    perStrategy[strategy] = (perStrategy[strategy] ?? 0) + 1;
    try {
      const { trace, result } = await toChrome(bytes); // JSON.parse inside: throws on invalid JSON
      assert.ok(Array.isArray(trace.traceEvents));
      for (const e of trace.traceEvents) {
        if (e.ph === "X") assert.ok(Number.isFinite(e.ts) && Number.isFinite(e.dur) && e.dur >= 0, `finite ts/dur (${strategy})`);
      }
      // ---- invariant (issue 21, docs/errors.md "Timestamps"): no X event reaches outside the span of the kept
      // records (GPU annotation spans are widened by 1 ns on each side), however the times were damaged.
      if (result.info.firstNs > 0n) {
        const span = Number(result.info.lastNs - result.info.firstNs) / 1000 + 0.002;
        const from = Number(result.info.firstNs - BigInt(trace.baseTimeNanoseconds)) / 1000 - 0.001;
        for (const e of trace.traceEvents) {
          if (e.ph === "X") assert.ok(e.ts >= from - 0.001 && e.dur <= span && e.ts + e.dur <= from + span + 0.001, `X event within the kept span (${strategy})`);
        }
      }
      // ---- end of the invariant
      converted++;
      if (runs % 4 === 0) {
        // The same input as XSpace: must decode as a protobuf XSpace.
        const parts: Buffer[] = [];
        await eng.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
        const x = fromBinary(XSpaceSchema, Buffer.concat(parts));
        assert.ok(x.planes.some((p) => p.name === "/host:CPU"), `XSpace planes (${strategy})`);
        xspaces++;
      }
      if (runs % 8 === 0) {
        // As rank 1 of 3 on a host (a part of `merge --format xspace`): interleaved ids must still resolve.
        const parts: Buffer[] = [];
        const xspaceHost = { ranks: 3, index: 1, devices: [{ local: 0, ordinal: 2, shared: true }] };
        await eng.convert(memorySource(bytes), (b) => parts.push(Buffer.from(b)), { format: "xspace", merge: { namespace: 1, label: "rank 1", xspaceHost } });
        const x = fromBinary(XSpaceSchema, Buffer.concat(parts));
        for (const p of x.planes) {
          for (const l of p.lines) {
            for (const e of l.events) {
              assert.ok(p.eventMetadata[String(e.metadataId)], `host part: event metadata ${e.metadataId} on ${p.name} (${strategy})`);
              for (const st of e.stats) assert.ok(p.statMetadata[String(st.metadataId)], `host part: stat ${st.metadataId} (${strategy})`);
            }
          }
        }
        hostParts++;
      }
    } catch (e: any) {
      if (e.code === "ERR_ASSERTION" || e.name === "Assertion") throw e;
      // Only the documented fatal errors are acceptable; a trap (INTERNAL) or invalid JSON (SyntaxError) is a defect.
      assert.ok((FATAL_NAMES as readonly string[]).includes(e.name), `${strategy}: unexpected ${e.name}: ${e.message}`);
      assert.match(e.message, /offset \d+/);
      errors[e.name] = (errors[e.name] ?? 0) + 1;
    }
  }
  console.log(
    `fuzz: ${runs} executions in ${BUDGET_MS} ms (seed ${SEED}): ${converted} converted (${xspaces} also as XSpace, ${hostParts} as an XSpace host part), clean errors ${JSON.stringify(errors)}; ` +
      `per strategy ${JSON.stringify(perStrategy)}`,
  );
  assert.ok(runs > 100, "the fuzzer ran");
  assert.ok(Object.keys(perStrategy).length === STRATEGIES.length, "every strategy ran");
});

test.run();
