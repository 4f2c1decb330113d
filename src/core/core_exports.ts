/**
 * The functions and memory the WebAssembly core exports (assembly/index.ts), as the host drivers call them
 * (src/core/engine.ts, src/core/file_info.ts). Only numbers cross: pointers into `memory`, counts, u64 as BigInt.
 */

/** The core's exports. Optional members are absent from older cores that bench/ab.ts runs beside the current one. */
export interface CoreExports {
  /** Its memory (a WebAssembly.Memory; typed by the one member read, so that rawtrace/node's declarations, which
   * name this type, check without the DOM lib that declares WebAssembly's: test/package/pack.test.ts). */
  memory: { readonly buffer: ArrayBuffer };
  rt_reset(): void;
  rt_begin_index(): void;
  rt_begin_emit(sink: number): void;
  rt_needs_projection(): number;
  /** 1: run the projection pass; 0: pass 2 projects (a core before this returned nothing: run the pass). */
  rt_begin_project(): number | undefined;
  rt_input_ptr(): number;
  rt_input_free(): number;
  rt_feed(n: number): number;
  rt_end_pass(): number;
  rt_set_option(opt: number, value: number): void;
  rt_alloc(n: number): number;
  rt_set_trace_name(p: number, n: number): void;
  rt_info(field: number): bigint;
  rt_set_output(baseNs: bigint, ns: number, eventsOnly: number, p: number, n: number): void;
  rt_set_xspace_host(ranks: number, index: number, producer: number, base: number, p: number, n: number): void;
  /** Absent from cores built before the XSpace spill (bench/ab.ts runs those beside the current one). */
  rt_set_xspace_limit?(n: bigint): void;
  rt_set_xspace_spill?(n: number): void;
  rt_set_xspace_keep?(n: number): void;
  /** Absent from cores built before XSpace's late records settled in their lines. */
  rt_set_xspace_settle?(on: number): void;
  /** Absent from cores built before the timeline resolved partners by sorting. */
  rt_set_partner_mode?(mode: number): void;
  /** Absent from cores built before paged tables spilled. */
  rt_set_paged_budget?(n: number): void;
  rt_clock_anchor(field: number): bigint;
  rt_records_of_kind(k: number): bigint;
  rt_text_ptr(which: number): number;
  rt_text_len(which: number): number;
  rt_device(i: number): number;
  rt_step_names(): number;
  rt_step_name_ptr(i: number): number;
  rt_step_name_len(): number;
  rt_step_mark(i: number, num: number): void;
  rt_steps_found(): number;
  rt_api_name(domain: number, id: number): number;
  rt_api_name_len(domain: number, id: number): number;
  rt_fatal_code(): number;
  rt_fatal_offset(): bigint;
  rt_fatal_detail(): bigint;
  /** A host-detected warning (codes from STILL_WRITING on) for the output's end; 1 if recorded (absent before 2026-12-01). */
  rt_host_warn?(code: number, offset: bigint, detail: bigint, count: bigint): number;
  /** Input offset from which the source's bytes may not be the file's own (absent before 2026-12-02). */
  rt_set_unverified_from?(off: bigint): void;
  rt_warning_count(code: number): bigint;
  rt_warning_offset(code: number): bigint;
  rt_warning_detail(code: number): bigint;
  rt_loss_total(field: number): bigint;
  rt_loss_range(i: number, field: number): bigint;
  /** Optional: absent from cores built before split conversion (bench/ab.ts times such cores). */
  rt_split_set?(worker: number, workers: number, segments: number): void;
  rt_split_close(): void;
  rt_split_export(): number;
  rt_split_rows(): number;
  rt_split_state(field: number): bigint;
  rt_split_import(p: number, n: number, lastEnd: bigint, overhead: number, events: bigint): void;
  /** Absent from cores built before the viewer's details came from the dump (src/core/details.ts). */
  rt_details_target?(start: number, kind: number, cls: number, a: number, b: number): void;
  rt_details_all?(): void;
}

/** Exports that return a pointer into the core's memory (a usize). */
const POINTER_RESULTS = ["rt_input_ptr", "rt_alloc", "rt_text_ptr", "rt_device", "rt_step_name_ptr", "rt_api_name", "rt_split_export"] as const;

/**
 * `e` with its pointer results read unsigned: a usize arrives in JavaScript as a signed i32, so past 2 GiB of core
 * memory a pointer was a negative offset (a RangeError building a view of the memory, or a wrong byte read). The other
 * members are `e`'s own.
 */
export function unsignedPointers(e: CoreExports): CoreExports {
  const out: Record<string, unknown> = { ...(e as unknown as Record<string, unknown>) };
  for (const k of POINTER_RESULTS) {
    const f = out[k] as ((...a: number[]) => number) | undefined;
    if (f) out[k] = (...a: number[]) => f(...a) >>> 0;
  }
  return out as unknown as CoreExports;
}
