/**
 * The vendor-neutral normalized event. Every decoder (CUPTI, rocprofiler-sdk, PTI, Synapse: see
 * docs/architecture.md) fills one {@link Ev} per timeline item and hands it to the active emitter; emitters read
 * only this struct and the session tables (assembly/model/session.ts), never vendor records.
 *
 * Times are Unix-epoch ns (already clock-aligned). Names are (pointer, length) into bytes the session owns
 * (string arena or static data), valid UTF-8, not yet JSON-escaped.
 */

/** What an event is. Emitters map each kind to their own category names. */
export const enum EvKind {
  KERNEL = 1,
  MEMCPY = 2,
  MEMSET = 3,
  /** A host API call of the vendor runtime (cudaLaunchKernel, hipMemcpy, zeCommandListAppend…). */
  API_RUNTIME = 4,
  /** A host API call of the vendor driver layer (cuLaunchKernel, L0). */
  API_DRIVER = 5,
  /** A host-side synchronization (stream/event/context sync, stream wait event). */
  SYNC = 6,
  /** A device-side event record (CUDA event with a device timestamp). */
  EVENT_RECORD = 7,
  /** Tracing overhead reported by the vendor library. */
  OVERHEAD = 8,
  /** A user range on a host thread (NVTX, ROCTx). */
  RANGE = 9,
  /** A user instant marker on a host thread. */
  INSTANT = 10,
  /** A whole-graph execution span on a device stream. */
  GRAPH = 11,
  /** A host range projected onto a device stream: the span of the device work it launched (model/ranges.ts). */
  GPU_RANGE = 12,
  /** A sampled counter value on a device (Synapse 'C' events): name, start, device, value in {@link Ev.bytes}. */
  COUNTER = 13,
}

/** Flag bits of {@link Ev.flags}. */
export const enum EvFlag {
  /** externalId is valid. */
  HAS_EXTERNAL = 1,
  /** The host API call starts an async flow to device work (launches, async copies, syncs). */
  FLOW_START = 2,
  /** The device op ends a flow from its host API call. */
  FLOW_END = 4,
  /** A memcpy/memset is asynchronous. */
  ASYNC = 8,
  /** The stream id is not valid (context-wide sync); emitters put it on a context row. */
  NO_STREAM = 16,
  /** Grid/block/registers/shared memory fields are valid (kernels). */
  HAS_LAUNCH = 32,
  /** Graph ids are valid. */
  HAS_GRAPH = 64,
  /** channel fields are valid. */
  HAS_CHANNEL = 128,
  /** queued timestamp is valid. */
  HAS_QUEUED = 256,
  /** Peer-to-peer copy: src/dst device and context are valid. */
  PEER = 512,
  /** A user-annotation external id (CUPTI CUSTOM1) is in userExternalId. */
  HAS_USER_EXTERNAL = 1024,
  /**
   * The vendor record has a start but no end (work unfinished at the final, forced flush): end = start. Emitters
   * mark it and statistics leave it out (model/timing.ts).
   */
  INCOMPLETE = 2048,
  /** A host range that marks a training step (model/steps.ts): its number is in stepNum. */
  STEP = 4096,
  /** A host API call that allocated or freed device memory: address (and bytes, when known) are valid. */
  HAS_ALLOC = 8192,
  /**
   * Device work (kernel, copy, fill) named by command-queue and context handles, as Level Zero names it (Intel PTI):
   * submitted, queueHandle, contextHandle, kernelId and the call / source fields are valid. Emitters write this
   * identity (Chrome JSON: Kineto's XPU args) instead of the CUDA-style device / context / stream ids.
   */
  HAS_HANDLES = 16384,
  /**
   * The name's bytes stay as they are until the conversion ends (a session or arena string that is never rewritten,
   * or static data; not a scratch buffer a later record reuses): an emitter may key text it keeps on (namePtr,
   * nameLen). Decoders that cannot promise it leave it clear.
   */
  NAME_KEPT = 32768,
  /**
   * A copy or fill whose vendor record has no byte count (Synapse's DMA entries): {@link Ev.bytes} is 0 and means
   * unknown. Emitters leave the byte count and bandwidth out (Chrome JSON) or say "unknown" (statistics) instead of
   * writing 0 B and 0 GB/s.
   */
  BYTES_UNKNOWN = 65536,
  /**
   * A sync that waits on a CUDA event whose recording is known (decode/cupti_events.ts): {@link Ev.srcDevice} holds
   * the stream that recorded the event and {@link Ev.srcContext} that record's correlation id.
   */
  WAIT_SOURCE = 131072,
}

/**
 * Category of a host API call ({@link Ev.apiCat}), chosen by its decoder: which layer of which API family the call
 * belongs to. Emitters name it (Chrome JSON: Kineto's `cat`, emit/chrome_category.ts); none asks for the vendor.
 */
export namespace ApiCat {
  /** Not a host API call (every other kind); a decoder sets one of the values below on each API event. */
  export const NONE: u8 = 0;
  /** A CUDA-style runtime call: the CUDA runtime (CUPTI RUNTIME), HIP (rocprofiler-sdk HIP_RUNTIME_API). */
  export const CUDA_RUNTIME: u8 = 1;
  /** A call of the layer under a CUDA-style runtime: the CUDA driver (CUPTI DRIVER), HSA (rocprofiler-sdk HSA_*_API). */
  export const CUDA_DRIVER: u8 = 2;
  /** A SYCL / Unified Runtime call (PTI RUNTIME_API). */
  export const XPU_RUNTIME: u8 = 3;
  /** A Level Zero call (PTI DRIVER_API). */
  export const XPU_DRIVER: u8 = 4;
  /** A host-side wait or GPU barrier reported as a synchronization record (PTI DEVICE_SYNCHRONIZATION). */
  export const XPU_SYNC: u8 = 5;
  /** A collective-communication call (PTI COLLECTIVE_COMM: oneCCL). */
  export const COLLECTIVE_COMM: u8 = 6;
  /** A host call of an accelerator's graph runtime (Synapse host events: launches, recipe work). */
  export const HPU_OP: u8 = 7;
}

/**
 * One normalized event. A single instance is reused by a decoder for every record: an emitter must copy what it
 * keeps. Layout is fixed (@unmanaged) so field access compiles to plain loads.
 */
@unmanaged
export class Ev {
  kind: u32;
  flags: u32;
  /** Start, Unix-epoch ns. */
  start: u64;
  /** End, Unix-epoch ns (≥ start: model/timing.ts drops inverted records; = start when INCOMPLETE). */
  end: u64;
  /** Vendor correlation id joining a host call with its device work. */
  correlation: u64;
  /** Framework op id (CUPTI CUSTOM0 external correlation), when HAS_EXTERNAL. */
  externalId: u64;
  /** User-annotation id (CUPTI CUSTOM1), when HAS_USER_EXTERNAL. */
  userExternalId: u64;
  /** Display name bytes (valid UTF-8) and length. */
  namePtr: usize;
  nameLen: u32;
  /** Vendor API id (CUPTI cbid) for API events; sync type for SYNC; overhead kind for OVERHEAD. */
  apiId: u32;
  /** Device ordinal, context and stream of device work. */
  device: u32;
  context: u32;
  stream: u32;
  /** OS process and thread of host work. */
  pid: u32;
  tid: u32;
  /** Bytes moved or set (memcpy, memset). */
  bytes: u64;
  /** Kernel launch shape. */
  gridX: i32;
  gridY: i32;
  gridZ: i32;
  blockX: i32;
  blockY: i32;
  blockZ: i32;
  registersPerThread: u32;
  staticSharedMemory: u32;
  dynamicSharedMemory: u32;
  /** CUDA graph membership. */
  graphId: u32;
  graphNodeId: u64;
  /** Hardware channel (CUDA ≥ 12). */
  channelId: u32;
  channelType: u32;
  /** Queued timestamp, Unix-epoch ns (when HAS_QUEUED). */
  queued: u64;
  /** Memcpy kinds (vendor-neutral: see decoders), memset value/memory kind. */
  copyKind: u32;
  srcKind: u32;
  dstKind: u32;
  memsetValue: u32;
  /** Peer copies. */
  srcDevice: u32;
  dstDevice: u32;
  srcContext: u32;
  dstContext: u32;
  /**
   * Sync: CUDA event id waited on (and with WAIT_SOURCE, srcDevice / srcContext are the stream and correlation id of
   * the event's recording). Event record: event id.
   */
  eventId: u32;
  /** API return value. */
  returnValue: u32;
  /** Range/marker domain name (0 length = default domain) and color (ARGB, 0 = none). */
  domainPtr: usize;
  domainLen: u32;
  color: u32;
  /** Vendor record kind, for diagnostics and the decoder's own use (emitters do not read it). */
  recordKind: u32;
  /** Training-step number of a step range (flag STEP). */
  stepNum: u64;
  /** Device address of the memory an API call allocated or freed (HAS_ALLOC; bytes holds its size, 0 = unknown). */
  address: u64;
  /**
   * Device work named by handles (flag HAS_HANDLES; Intel XPU, PTI): submit timestamp (Unix ns, 0 = unknown; the append timestamp is `queued`), Level
   * Zero command-queue and context handles, PTI kernel id, the back-end call of a copy or fill (`l0 call`) or the
   * source file of a kernel (bytes and length, 0 = none), and that kernel's source line.
   */
  submitted: u64;
  queueHandle: u64;
  contextHandle: u64;
  kernelId: u64;
  callPtr: usize;
  callLen: u32;
  sourceLine: u64;
  /** Vendor arguments (model/args.ts list; 0 length = none): valid only while the event is emitted. */
  argsPtr: usize;
  argsLen: u32;
  /** Host-call category ({@link ApiCat}) of an API_RUNTIME / API_DRIVER event, set by its decoder; NONE otherwise. */
  apiCat: u8;
  // Padding: the struct stays a multiple of 16 bytes (288), so evClear clears it with whole v128 stores.
  private pad8: u8;
  private pad16: u16;
  private pad32: u32;
}

/**
 * Clears every field of `e` (decoders call it before filling a record): 18 v128 stores at constant offsets, written
 * out, not a loop (a loop of 18 rounds cost about 100 instructions per record) and not memory.fill (engines run a
 * bulk-memory instruction as a call into the runtime).
 */
// @ts-ignore: decorator
@inline export function evClear(e: Ev): void {
  const p = changetype<usize>(e);
  if (offsetof<Ev>() != 288) ERROR("Ev must stay 288 bytes (18 × 16): evClear clears it with 18 v128 stores");
  const z = i64x2.splat(0);
  v128.store(p, z, 0);
  v128.store(p, z, 16);
  v128.store(p, z, 32);
  v128.store(p, z, 48);
  v128.store(p, z, 64);
  v128.store(p, z, 80);
  v128.store(p, z, 96);
  v128.store(p, z, 112);
  v128.store(p, z, 128);
  v128.store(p, z, 144);
  v128.store(p, z, 160);
  v128.store(p, z, 176);
  v128.store(p, z, 192);
  v128.store(p, z, 208);
  v128.store(p, z, 224);
  v128.store(p, z, 240);
  v128.store(p, z, 256);
  v128.store(p, z, 272);
}
