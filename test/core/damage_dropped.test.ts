/**
 * Where the collector's losses are said (assembly/engine.ts, assembly/model/session.ts addDropped): DROPPED_RECORDS
 * and DROPPED_BUFFERS carry the file offset of the first DROPPED chunk that counted them, as every other warning
 * carries the offset of its chunk. Both said offset 0 (the preamble) before.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { RawtraceWriter } from "../../src/format/writer.js";
import { info } from "../helpers/convert.js";
import { chunkSpans } from "../helpers/dump_chunks.js";

const T = 1_780_000_000_000_000_000n;

/** A CUDA dump: header, clock, then `more`, then END. */
function dump(more: (w: RawtraceWriter) => void): Uint8Array {
  const w = RawtraceWriter.inMemory();
  w.header({ vendor: 1, vendorVersion: 130001, runtimeVersion: 13000, driverVersion: 13000, pid: 100, startNs: T, hostname: "h", commandLine: "app" });
  w.clock({ which: 0, vendorNs: T, realtimeNs: T, monotonicNs: 1n, monotonicRawNs: 1n, boottimeNs: 1n });
  more(w);
  w.end();
  return w.bytes();
}

test("DROPPED_RECORDS and DROPPED_BUFFERS: the offset of the first DROPPED chunk that counted them (a count of 0 counts nothing)", async () => {
  const bytes = dump((w) => {
    w.dropped(0, 1); // loses nothing
    w.log(1, "between");
    w.dropped(3, 2); // CUDA's memory cap: whole buffers
    w.dropped(5, 1); // records
    w.dropped(2, 3); // buffers (a write error)
    w.dropped(4, 1);
  });
  const drops = chunkSpans(bytes).filter((c) => c.type === 8);
  assert.is(drops.length, 5);
  const i = await info(bytes);
  const records = i.warnings.find((x) => x.code === "DROPPED_RECORDS")!;
  const buffers = i.warnings.find((x) => x.code === "DROPPED_BUFFERS")!;
  assert.equal([records.offset, records.detail], [drops[2].off, 9]);
  assert.equal([buffers.offset, buffers.detail], [drops[1].off, 5]);
});

test("the memory cap's count, settled once the vendor is known, keeps its own chunk's offset when it came first", async () => {
  const bytes = dump((w) => {
    w.dropped(2, 3);
    w.dropped(6, 2);
  });
  const drops = chunkSpans(bytes).filter((c) => c.type === 8);
  const buffers = (await info(bytes)).warnings.find((x) => x.code === "DROPPED_BUFFERS")!;
  assert.equal([buffers.offset, buffers.detail], [drops[0].off, 8]);
  const capFirst = dump((w) => {
    w.dropped(6, 2);
    w.dropped(2, 3);
  });
  const at = chunkSpans(capFirst).filter((c) => c.type === 8)[0].off;
  assert.is((await info(capFirst)).warnings.find((x) => x.code === "DROPPED_BUFFERS")!.offset, at);
});

test.run();
