/**
 * The Chrome JSON args of device work named by queue and context handles (EvFlag.HAS_HANDLES: Level Zero, set by
 * decode/pti.ts), as Kineto's XPU plugin (`libkineto/src/plugin/xpupti/XpuptiActivityHandlers.cpp`) writes them for
 * kernels, copies and fills (the categories of host calls: emit/chrome_category.ts). emit/chrome_json.ts calls this
 * for every event with the flag; everything else (rows, flows, metadata) is shared.
 */
import { Ev, EvKind, EvFlag } from "../model/event";
import * as O from "./out";
import { chromeArgs } from "./chrome_args";

/** `"0x%016x"` of a handle, quoted. */
function hex16(v: u64): void {
  O.ascii('"0x');
  for (let s: i32 = 60; s >= 0; s -= 4) {
    const d = <u32>((v >> <u64>s) & 0xf);
    O.byte(d < 10 ? 48 + d : 87 + d);
  }
  O.byte(34);
}

/** Kineto's `"{us}.{ns:03}"` text of a signed ns value, quoted. */
function usText(ns: i64): void {
  O.byte(34);
  if (ns < 0) {
    O.byte(45);
    ns = -ns;
  }
  O.micros(<u64>ns);
  O.byte(34);
}

/**
 * `,"<label>":"us","<label>_rel_to_start":"us"` of one device timestamp (Unix ns): µs after the time base, and signed
 * µs from the event's start. Nothing when the record has none (0).
 */
function stamp(label: string, t: u64, e: Ev, base: u64): void {
  if (t == 0) return;
  O.ascii(',"');
  O.ascii(label);
  O.ascii('":');
  usText(<i64>(t > base ? t - base : 0));
  O.ascii(',"');
  O.ascii(label);
  O.ascii('_rel_to_start":');
  usText(<i64>(t - e.start));
}

/**
 * The args of an XPU kernel, copy or fill after `head` wrote the common ones (External id): Kineto's `correlation`
 * (left out when 0, PTI's "none"), `appended` / `submitted` (and their `_rel_to_start`), `device`, `context`, `sycl queue`, `l0 queue`, then for
 * kernels `source_file_name` / `source_line_number` (with debug info) and `kernel_id`, for copies and fills
 * `l0 call`, `bytes`, `memory bandwidth (GB/s)`. `stream` (the SYCL queue id, the row) is added for HTA, which
 * recognises GPU work by it; then the vendor args (a tile's `tile`: decode/pti.ts). `base` is the output time base
 * (Unix ns). Leaves the args object open.
 */
export function xpuDeviceArgs(e: Ev, base: u64): void {
  xpuFields(e, base);
  chromeArgs(e);
}

function xpuFields(e: Ev, base: u64): void {
  O.need(O.EVENT_RESERVE);
  if (e.correlation != 0) {
    O.ascii('"correlation":');
    O.u64dec(e.correlation);
    stamp("appended", (e.flags & EvFlag.HAS_QUEUED) != 0 ? e.queued : 0, e, base);
    stamp("submitted", e.submitted, e, base);
    O.ascii(',"device":');
    O.u64dec(e.device);
  } else {
    // 0 is "not correlated" (PTI's ids start at 1): no key, as putCorr in chrome_json.ts, so that HTA does not join
    // every such op to every other one. `device` opens the args instead.
    O.ascii('"device":');
    O.u64dec(e.device);
    stamp("appended", (e.flags & EvFlag.HAS_QUEUED) != 0 ? e.queued : 0, e, base);
    stamp("submitted", e.submitted, e, base);
  }
  O.ascii(',"context":');
  hex16(e.contextHandle);
  O.ascii(',"sycl queue":');
  O.u64dec(e.stream);
  O.ascii(',"l0 queue":');
  hex16(e.queueHandle);
  O.ascii(',"stream":');
  O.u64dec(e.stream);
  if (e.kind == EvKind.KERNEL) {
    if (e.callLen != 0) {
      O.ascii(',"source_file_name":');
      O.jsonString(e.callPtr, e.callLen);
      O.need(256);
      O.ascii(',"source_line_number":');
      O.u64dec(e.sourceLine);
    }
    O.ascii(',"kernel_id":');
    O.u64dec(e.kernelId);
    return;
  }
  if ((e.flags & EvFlag.PEER) != 0) {
    O.ascii(',"fromDevice":');
    O.u64dec(e.srcDevice);
    O.ascii(',"toDevice":');
    O.u64dec(e.dstDevice);
  }
  if (e.callLen != 0) {
    O.ascii(',"l0 call":');
    O.jsonString(e.callPtr, e.callLen);
    O.need(256);
  }
  O.ascii(',"bytes":');
  O.u64dec(e.bytes);
  // A zero-length copy or fill has no bandwidth: the key is left out, as for CUDA's (chrome_json.ts) and in Kineto's
  // XPU plugin at 114171df. Some Kineto revisions wrote "N/A" (014433b5): one string in HTA's numeric
  // memory_bw_gbps column fails get_memory_bw_time_series for the whole rank (before 2026-12-03 rawtrace wrote it too).
  const dur = e.end - e.start;
  if (dur > 0) {
    O.ascii(',"memory bandwidth (GB/s)":');
    O.fixed(<f64>e.bytes / <f64>dur, 9);
  }
}
