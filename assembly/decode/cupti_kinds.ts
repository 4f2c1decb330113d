/**
 * CUPTI record kinds and the built-in record sizes of each CUPTI version (NVIDIA CUDA): what the decoder's passes
 * (decode/cupti.ts, decode/cupti_scan.ts, decode/cupti_nvtx.ts) switch on. Values and sizes from CUPTI's
 * cupti_activity.h (CUDA 11.8, 12.9, 13.0U1, 13.5 wheels; vendor-record-layouts.md §1).
 */

/** CUpti_ActivityKind values this decoder reads. */
export const enum K {
  MEMCPY = 1,
  MEMSET = 2,
  KERNEL = 3,
  DRIVER = 4,
  RUNTIME = 5,
  DEVICE = 8,
  CONTEXT = 9,
  CONCURRENT_KERNEL = 10,
  NAME = 11,
  MARKER = 12,
  MARKER_DATA = 13,
  OVERHEAD = 17,
  MEMCPY2 = 22,
  CUDA_EVENT = 36,
  STREAM = 37,
  SYNCHRONIZATION = 38,
  EXTERNAL_CORRELATION = 39,
  INTERNAL_LAUNCH_API = 48,
  GRAPH_TRACE = 51,
}

/** CUPTI's "invalid" marker for stream ids of context-wide syncs. */
export const INVALID_U32: u32 = 0xffffffff;

// ---- Built-in record sizes (used only when a dump has no KIND_SIZES chunk) -----------------------------------------

/**
 * Record sizes of the struct each CUPTI version emits, by CUPTI_API_VERSION, used only when a dump has no
 * KIND_SIZES chunk. Verified against the header wheels of CUDA 11.8 (API 18), 12.9 (API 28), 13.0U1 (130001) and
 * 13.5 (130500) by test/fixtures/cupti and test/decode; versions between 18 and 28 take the 11.8 sizes (CUDA 12.0
 * also reports 18), versions from 130000 to 130499 the 13.0 sizes. 13.5 brought Kernel13 (248 B), Memcpy7 (112),
 * Memset5 (104), Device6 (192), Context4 (40) and CudaEvent3 (80), each an append-only successor.
 */
export function builtinSize(kind: u32, version: u32): u32 {
  const v12 = version >= 28;
  const v13 = version >= 130000;
  const v135 = version >= 130500;
  switch (kind) {
    case K.MEMCPY: return v135 ? 112 : v12 ? 96 : 88;
    case K.MEMSET: return v135 ? 104 : 88;
    case K.KERNEL:
    case K.CONCURRENT_KERNEL: return v135 ? 248 : v13 ? 216 : v12 ? 208 : 200;
    case K.DRIVER:
    case K.RUNTIME:
    case K.INTERNAL_LAUNCH_API: return 40;
    case K.DEVICE: return v135 ? 192 : v12 ? 184 : 176;
    case K.CONTEXT: return v135 ? 40 : v12 ? 32 : 16;
    case K.NAME: return 32;
    case K.MARKER: return 56;
    case K.MARKER_DATA: return v13 ? 40 : 32;
    case K.OVERHEAD: return v12 ? 56 : 40;
    case K.MEMCPY2: return 96;
    case K.CUDA_EVENT: return v135 ? 80 : v12 ? 56 : 24;
    case K.STREAM: return 24;
    case K.SYNCHRONIZATION: return v12 ? 56 : 40;
    case K.EXTERNAL_CORRELATION: return 24;
    case K.GRAPH_TRACE: return v12 ? 56 : 48;
  }
  return 0;
}

/** Largest CUPTI API version whose layouts this build knows (13.x). */
export const NEWEST_KNOWN_VERSION: u32 = 139999;
