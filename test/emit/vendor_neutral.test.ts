/**
 * The rule of docs/architecture.md: decoders turn vendor records into the normalized model; emitters read only that
 * model. No emitter source (assembly/emit/*.ts) may name a vendor id, compare the dump's vendor, read a vendor's
 * record kind or import a decoder: what differs between vendors travels in the model (Ev.apiCat, EvFlag.HAS_HANDLES,
 * the session's deviceMaker / overheadName / cudaVersions). Every decoder sets a host-call category: no API event of
 * any vendor's sample falls back to `host_api`; CUDA's versions are written for CUPTI dumps with a HEADER only.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { RawtraceWriter } from "../../src/format/writer.js";
import { toChrome } from "../helpers/convert.js";

const EMIT = "assembly/emit";

/** What an emitter must not contain (in code; comments may talk about vendors). */
const FORBIDDEN: Array<[string, RegExp]> = [
  ["a vendor-id constant", /\bVENDOR_[A-Z0-9_]*/],
  ["the HEADER's vendor id", /\bS\.vendor\b/],
  ["a comparison with a vendor", /\bvendor\s*[!=]==?|[!=]==?\s*(?:\w+\.)?vendor\b/i],
  ["the installed decoder's vendor", /\bactiveVendor\b/],
  ["a vendor's record kind", /\brecordKind\b/],
  ["a decoder module", /from\s+["']\.\.\/decode\//],
];

/** The source without its comments (block and line); block comments keep their newlines, so line numbers hold. */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, "")).replace(/(^|[^:"'])\/\/.*$/gm, "$1");
}

/** Every rule the source `text` breaks, as "line N: what (text)". */
function violations(text: string): string[] {
  const out: string[] = [];
  code(text).split("\n").forEach((line, i) => {
    for (const [what, re] of FORBIDDEN) {
      const m = re.exec(line);
      if (m) out.push(`line ${i + 1}: ${what} (${m[0]})`);
    }
  });
  return out;
}

test("the checker flags each way an emitter could ask for the vendor (lines the emitters once had)", () => {
  const bad = [
    "if (S.vendor == VENDOR_XPU) {",
    'const vendor = S.vendor == 2 || S.vendor == 3 ? "AMD" : "Nvidia";',
    "if (e.recordKind == PTI_KIND_SYNC) return \"xpu_sync\";",
    "const VENDOR_HPU: u32 = 5;",
    "if (activeVendor == 4) x();",
    'import { K } from "../decode/pti";',
    "if (vendor != 1) return;",
  ];
  for (const line of bad) assert.ok(violations(line).length > 0, line);
  // Printing what the model carries is fine, and so are comments about vendor records.
  const fine = [
    "if (S.vendorTextLen != 0) addPlaneStr(meta, \"vendor_library_version\", S.vendorTextPtr, S.vendorTextLen);",
    "keyU('\"cupti_version\":', S.vendorVersion);",
    "/** No end in the vendor record (model/timing.ts): vendor == 4 once mattered here. */",
    "q = vendorArgs(q, e); // the vendor args of e",
    "const vendor = S.deviceMaker;",
  ];
  for (const line of fine) assert.equal(violations(line), [], line);
});

test("no emitter asks which vendor wrote the dump", () => {
  const files = readdirSync(EMIT).filter((f) => f.endsWith(".ts")).sort();
  assert.ok(files.includes("chrome_json.ts") && files.includes("xspace.ts") && files.includes("chrome_category.ts"));
  const found: string[] = [];
  for (const f of files) for (const v of violations(readFileSync(join(EMIT, f), "utf8"))) found.push(`${EMIT}/${f} ${v}`);
  assert.equal(found, []);
});

test("every vendor's decoder sets the category of its host calls (samples of all four decoders)", async () => {
  const expected: Record<string, string[]> = {
    "alexnet_a100_rank0.rawtrace": ["cuda_runtime"],
    "h100_torch_train_nvtx.rawtrace": ["cuda_driver", "cuda_runtime"],
    "mi250_minitoy_rocprof.rawtrace": ["cuda_runtime"],
    "xpu_train_pti.rawtrace": ["collective_comm", "xpu_driver", "xpu_runtime", "xpu_sync"],
    "gaudi2_mlp_synapse.rawtrace": ["hpu_op"],
  };
  for (const [name, cats] of Object.entries(expected)) {
    const { trace } = await toChrome(readFileSync(join("samples", name)), {}, name);
    // Host API events are the ones with a cbid (every vendor's decoder sets one: CUPTI cbid, operation, name id).
    const seen = new Set(trace.traceEvents.filter((e) => e.ph === "X" && e.args?.cbid !== undefined).map((e) => e.cat));
    assert.equal([...seen].sort(), cats, name);
  }
});

test("CUDA's versions come from the decoder's source facts, only with a HEADER", async () => {
  const dump = (vendor: number | null): Uint8Array => {
    const w = RawtraceWriter.inMemory();
    if (vendor !== null) {
      w.header({ vendor, vendorVersion: 130001, runtimeVersion: 13000, driverVersion: 13010, pid: 1, startNs: 1n, hostname: "h", commandLine: "x" });
    }
    w.apiNames([[2, 211, "cudaLaunchKernel_v7000"]]);
    return w.bytes();
  };
  const head = async (vendor: number | null) => {
    const { trace } = await toChrome(dump(vendor));
    return [trace.cupti_version, trace.cuda_runtime_version, trace.cuda_driver_version];
  };
  assert.equal(await head(1), [130001, 13000, 13010]); // CUPTI: the HEADER's versions are CUDA's
  for (const v of [2, 4, 5]) assert.equal(await head(v), [undefined, undefined, undefined], `vendor ${v}`);
  // No HEADER: read as CUDA (the CUPTI decoder), but there are no versions to write.
  assert.equal(await head(null), [undefined, undefined, undefined]);
});

test.run();
