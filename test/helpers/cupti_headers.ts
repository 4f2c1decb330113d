/**
 * The pinned CUDA header sets (scripts/cuda-headers.sh → .cache/cuda/<tag>/include), read at test time: the callback
 * id tables of cupti_runtime_cbid.h / cupti_driver_cbid.h and the version defines. Nothing here is typed in from the
 * headers; every value is parsed out of them.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Every pinned header set, oldest first: CUDA 11.8, 12.9, 13.0 Update 1, 13.5. */
export const CUDA_TAGS = ["cu118", "cu12", "cu13", "cu135"] as const;
export type CudaTag = (typeof CUDA_TAGS)[number];

/** Installs the named header sets (offline when cached; the script is idempotent). */
export function ensureCudaHeaders(tags: readonly CudaTag[] = CUDA_TAGS): void {
  execFileSync("bash", [join(ROOT, "scripts/cuda-headers.sh"), ...tags], { stdio: ["ignore", "ignore", "inherit"] });
}

/** Text of one header of a set. */
export function cudaHeader(tag: CudaTag, file: string): string {
  return readFileSync(join(ROOT, ".cache/cuda", tag, "include", file), "utf8");
}

/** Value of `#define NAME <decimal>` in one header of a set. */
export function cudaDefine(tag: CudaTag, file: string, name: string): number {
  const m = new RegExp(`^#define\\s+${name}\\s+(\\d+)`, "m").exec(cudaHeader(tag, file));
  if (!m) throw new Error(`${tag}/${file}: no #define ${name}`);
  return Number(m[1]);
}

/** CUPTI callback domains as API_NAMES stores them: 1 = driver API, 2 = runtime API. */
export type CbidDomain = 1 | 2;

/** One callback id of a cbid header: the enum member's name without its `CUPTI_*_TRACE_CBID_` prefix. */
export interface Cbid {
  domain: CbidDomain;
  cbid: number;
  /** e.g. `cudaLaunchKernel_v7000`, `cuMemAlloc_v2`: what cuptiGetCallbackName returns for it. */
  name: string;
}

/**
 * Every callback id of a header set's runtime and driver tables, in header order, without the INVALID, SIZE and
 * FORCE_INT markers. Throws when a header holds a member it cannot read (a value that is not a plain number).
 */
export function cbidTable(tag: CudaTag): Cbid[] {
  const out: Cbid[] = [];
  for (const [domain, file, prefix] of [
    [2, "cupti_runtime_cbid.h", "CUPTI_RUNTIME_TRACE_CBID_"], [1, "cupti_driver_cbid.h", "CUPTI_DRIVER_TRACE_CBID_"],
  ] as const) {
    const text = cudaHeader(tag, file);
    const body = /typedef enum[^{]*\{([\s\S]*?)\}/.exec(text);
    if (!body) throw new Error(`${tag}/${file}: no enum`);
    for (const line of body[1].split("\n")) {
      const t = line.replace(/\/\/.*$/, "").trim();
      if (!t) continue;
      const m = new RegExp(`^${prefix}(\\w+)\\s*=\\s*(0x[0-9a-fA-F]+|\\d+)\\s*,?$`).exec(t);
      if (!m) throw new Error(`${tag}/${file}: unreadable enum line ${JSON.stringify(t)}`);
      if (m[1] === "INVALID" || m[1] === "SIZE" || m[1] === "FORCE_INT") continue;
      out.push({ domain, cbid: Number(m[2]), name: m[1] });
    }
  }
  return out;
}

/** The cbid of `CUPTI_<RUNTIME|DRIVER>_TRACE_CBID_<name>` in a table, or undefined when the set lacks it. */
export function cbidOf(table: readonly Cbid[], domain: CbidDomain, name: string): number | undefined {
  return table.find((c) => c.domain === domain && c.name === name)?.cbid;
}
