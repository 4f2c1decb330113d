/**
 * Kineto's rules for CUPTI API calls, restated from pytorch/kineto libkineto (HEAD 114171df, facts in
 * ../shared/reference/kineto.md §2) by callback enum NAME, and resolved against one header set's own cbid tables, the
 * way compiling libkineto against those headers resolves them. This is the test-side generator of expectations: it
 * shares no code with the decoder (assembly/decode/cupti_api.ts keeps the numbers), so a cbid the decoder got wrong
 * for any pinned CUDA version shows up as a mismatch.
 *
 * - `cupti_strings.cpp` lookupCbidName: cuptiGetCallbackName's string; the last non-digit is found; if it is a `v`
 *   right after a `_` (at index ≥ 1) and at least four digits follow, the string is cut before that `_`.
 * - `CuptiCbidRegistry.cpp`: explicit (domain, cbid) registrations with {requiresFlowCorrelation, isBlocklisted},
 *   plus one runtime range cudaMemcpy_v3020 … cudaMemset2DAsync_v3020 (flow). Runtime records that are blocklisted are
 *   dropped (handleRuntimeActivity); driver records that are not registered are dropped (isTrackedDriverCbid).
 */
import { cbidOf, cudaDefine, type Cbid, type CbidDomain, type CudaTag } from "./cupti_headers.js";

/** Kineto's display name of the string cuptiGetCallbackName returned. */
export function kinetoName(raw: string): string {
  if (raw === "") return "INVALID";
  let v = raw.length - 1;
  while (v >= 0 && raw[v] >= "0" && raw[v] <= "9") v--;
  if (v >= 1 && raw[v] === "v" && raw[v - 1] === "_" && raw.length - v - 1 >= 4) return raw.slice(0, v - 1);
  return raw;
}

/** One registration of CuptiCbidRegistry's constructor; `when` mirrors its #if around the entry. */
interface Registration {
  domain: CbidDomain;
  name: string;
  flow: boolean;
  blocklisted: boolean;
  when?: (tag: CudaTag) => boolean;
}

const R = 2 as const;
const D = 1 as const;
const REGISTRY: Registration[] = [
  { domain: R, name: "cudaLaunchKernel_v7000", flow: true, blocklisted: false },
  { domain: R, name: "cudaLaunchCooperativeKernel_v9000", flow: true, blocklisted: false },
  { domain: R, name: "cudaLaunchCooperativeKernelMultiDevice_v9000", flow: true, blocklisted: false },
  { domain: R, name: "cudaLaunchKernelExC_v11060", flow: true, blocklisted: false,
    when: (t) => cudaDefine(t, "cupti_version.h", "CUPTI_API_VERSION") >= 18 },
  { domain: R, name: "cudaGraphLaunch_v10000", flow: true, blocklisted: false },
  { domain: R, name: "cudaStreamSynchronize_v3020", flow: true, blocklisted: false },
  { domain: R, name: "cudaDeviceSynchronize_v3020", flow: true, blocklisted: false },
  { domain: R, name: "cudaStreamWaitEvent_v3020", flow: true, blocklisted: false },
  { domain: R, name: "cudaGetDevice_v3020", flow: false, blocklisted: true },
  { domain: R, name: "cudaSetDevice_v3020", flow: false, blocklisted: true },
  { domain: R, name: "cudaGetLastError_v3020", flow: false, blocklisted: true },
  { domain: R, name: "cudaEventCreate_v3020", flow: false, blocklisted: true },
  { domain: R, name: "cudaEventCreateWithFlags_v3020", flow: false, blocklisted: true },
  { domain: R, name: "cudaEventDestroy_v3020", flow: false, blocklisted: true },
  { domain: D, name: "cuLaunchKernel", flow: true, blocklisted: false },
  { domain: D, name: "cuLaunchKernelEx", flow: true, blocklisted: false,
    when: (t) => cudaDefine(t, "cuda.h", "CUDA_VERSION") >= 11060 },
  { domain: D, name: "cuMemCreate", flow: false, blocklisted: false },
  { domain: D, name: "cuMemMap", flow: false, blocklisted: false },
  { domain: D, name: "cuMemUnmap", flow: false, blocklisted: false },
  { domain: D, name: "cuMemRelease", flow: false, blocklisted: false },
  { domain: D, name: "cuMemExportToShareableHandle", flow: false, blocklisted: false },
  { domain: D, name: "cuMemImportFromShareableHandle", flow: false, blocklisted: false },
];
/** registerCbidRange(RUNTIME, cudaMemcpy_v3020, cudaMemset2DAsync_v3020, flow, not blocklisted), inclusive. */
const RANGE = { domain: R, first: "cudaMemcpy_v3020", last: "cudaMemset2DAsync_v3020" } as const;

/** What Kineto does with one (domain, cbid) of a header set. */
export interface KinetoApiCall {
  /** Display name. */
  name: string;
  /** Left out of the trace (runtime blocklist; driver calls not registered). */
  hidden: boolean;
  /** Starts an ac2g flow (`"ph": "s"`) when shown. */
  flowStart: boolean;
}

/** Kineto's treatment of every cbid of `table` (one header set's runtime and driver tables). */
export function kinetoApiCalls(tag: CudaTag, table: readonly Cbid[]): KinetoApiCall[] {
  const resolve = (domain: CbidDomain, name: string): number => {
    const id = cbidOf(table, domain, name);
    if (id === undefined) throw new Error(`${tag}: Kineto names ${name}, which the header set lacks`);
    return id;
  };
  const explicit = new Map<string, Registration>();
  for (const r of REGISTRY) if (!r.when || r.when(tag)) explicit.set(`${r.domain}:${resolve(r.domain, r.name)}`, r);
  const lo = resolve(RANGE.domain, RANGE.first);
  const hi = resolve(RANGE.domain, RANGE.last);
  return table.map((c) => {
    const reg = explicit.get(`${c.domain}:${c.cbid}`);
    const inRange = c.domain === RANGE.domain && c.cbid >= lo && c.cbid <= hi;
    const registered = reg !== undefined || inRange;
    const flow = reg ? reg.flow : inRange;
    const blocklisted = reg ? reg.blocklisted : false;
    const hidden = c.domain === R ? blocklisted : !registered;
    return { name: kinetoName(c.name), hidden, flowStart: flow };
  });
}
