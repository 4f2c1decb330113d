/**
 * The recording an event sync or stream wait waits on (assembly/decode/cupti_events.ts; Chrome JSON's
 * `wait_on_stream` and `wait_on_cuda_event_record_corr_id`, docs/chrome_json.md): the last CUDA_EVENT record of the
 * same (context, event) with a smaller correlation id, -1 when there is none; an event re-recorded many times, an
 * event recorded once and waited on after tens of thousands of other events (past one generation of the bounded
 * table), another context's event of the same id, recordings delivered in a later buffer than the waits on them (one
 * event recorded and waited on 180 times), and
 * a CUDA event record's External id from its CPU op.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import * as C from "../../src/tools/cupti_records.js";
import { cudaWriter } from "../helpers/cuda_writer.js";
import { toChrome } from "../helpers/convert.js";

const L: C.CuptiLayout = "cuda13";
const T = 1_780_000_000_000_000_000n;
const at = (us: number) => T + BigInt(us) * 1000n;
const rec = (ctx: number, eventId: number, corr: number, stream: number, us: number) =>
  C.cudaEventRecord(L, { correlationId: corr, contextId: ctx, streamId: stream, eventId, deviceId: 0, deviceTimestamp: at(us) });
const wait = (ctx: number, eventId: number, corr: number, us: number, type = 2) =>
  C.syncRecord(L, { type, start: at(us), end: at(us) + 500n, correlationId: corr, contextId: ctx, streamId: 9, cudaEventId: eventId });

test("each wait names the last recording of its event before it; -1 without one; contexts apart", async () => {
  const w = cudaWriter(L, T, 1);
  const recs: Uint8Array[] = [
    wait(1, 2, 4, 1), // before any recording of event 2: unknown
    rec(1, 2, 5, 6, 2),
    rec(2, 2, 6, 8, 3), // the same event id in another context
    wait(1, 2, 30, 4, 1), // an event sync
  ];
  // Event 2 recorded again and again (more than the 8 recordings a ring keeps).
  for (let k = 0; k < 20; k++) recs.push(rec(1, 2, 40 + k, 7 + (k % 3), 10 + k));
  recs.push(wait(1, 2, 100, 40));
  recs.push(wait(2, 2, 101, 41));
  w.activity(C.concat(recs));
  w.end();
  const { trace } = await toChrome(w.bytes(), {}, "waits.rawtrace");
  const waits = new Map(trace.traceEvents.filter((e) => e.cat === "cuda_sync").map((e) => [e.args.correlation, e.args]));
  assert.equal([waits.get(4)!.wait_on_stream, waits.get(4)!.wait_on_cuda_event_record_corr_id], [-1, -1]);
  assert.equal([waits.get(30)!.wait_on_stream, waits.get(30)!.wait_on_cuda_event_record_corr_id], [6, 5]);
  assert.equal([waits.get(100)!.wait_on_stream, waits.get(100)!.wait_on_cuda_event_record_corr_id], [7 + (19 % 3), 59]);
  assert.equal([waits.get(101)!.wait_on_stream, waits.get(101)!.wait_on_cuda_event_record_corr_id], [8, 6]);
  assert.is(waits.get(30)!.cuda_sync_kind, "Event Sync");
  assert.is(waits.get(100)!.cuda_sync_kind, "Stream Wait Event");
});

test("an event recorded once, then 40,000 other events: a wait on it still finds the recording", async () => {
  const w = cudaWriter(L, T, 1);
  const recs: Uint8Array[] = [rec(1, 1, 3, 5, 1)];
  for (let k = 0; k < 40_000; k++) recs.push(rec(1, 1000 + k, 10 + k, 11, 2 + k));
  // Waited on after 17,000 others (past the first generation of 16,384 events): still known.
  recs.splice(17_000, 0, wait(1, 1, 17_005, 17_001)); // the call between its neighbours' ids, as CUPTI numbers them
  // Event 1 is recorded again later: it is carried into each new generation it is seen in.
  recs.splice(20_000, 0, rec(1, 1, 20_005, 12, 20_001));
  recs.push(wait(1, 1, 50_000, 50_000));
  recs.push(wait(1, 1000, 50_001, 50_001)); // recorded once, two generations ago: forgotten
  for (let i = 0; i < recs.length; i += 4000) w.activity(C.concat(recs.slice(i, i + 4000)));
  w.end();
  const { trace } = await toChrome(w.bytes(), {}, "many.rawtrace");
  const waits = new Map(trace.traceEvents.filter((e) => e.cat === "cuda_sync").map((e) => [e.args.correlation, e.args]));
  assert.equal([waits.get(17_005)!.wait_on_stream, waits.get(17_005)!.wait_on_cuda_event_record_corr_id], [5, 3]);
  assert.equal([waits.get(50_000)!.wait_on_stream, waits.get(50_000)!.wait_on_cuda_event_record_corr_id], [12, 20_005]);
  assert.equal([waits.get(50_001)!.wait_on_stream, waits.get(50_001)!.wait_on_cuda_event_record_corr_id], [-1, -1]);
});

test("a CUDA event record carries its CPU op's External id, as the call that recorded it; its correlation id without one", async () => {
  const w = cudaWriter(L, T, 1);
  w.activity(C.concat([
    C.externalRecord(L, 3, 7n, 10),
    C.apiRecord(L, { kind: 5, cbid: 135, start: at(1), end: at(2), processId: 1, threadId: 2, correlationId: 10 }),
    rec(1, 3, 10, 5, 3),
    rec(1, 3, 11, 5, 4),
  ]));
  w.end();
  const { trace } = await toChrome(w.bytes(), {}, "ext.rawtrace");
  const ev = trace.traceEvents.filter((e) => e.cat === "cuda_event");
  assert.equal(ev.map((e) => [e.name, e.args.correlation, e.args["External id"]]), [["cudaEvent", 10, 7], ["cudaEvent", 11, 11]]);
});

test("a recording delivered after the wait on it (another thread's buffer flushed later) is found; an earlier in-order one loses to a nearer late one", async () => {
  const w = cudaWriter(L, T, 1);
  // Buffer 1 (thread B): waits on event 4 (corr 105) and event 5 (corr 205); event 5 also recorded in order (corr 150).
  w.activity(C.concat([rec(1, 5, 150, 3, 1), wait(1, 4, 105, 10), wait(1, 5, 205, 11), wait(1, 6, 300, 12)]));
  // Buffer 2 (thread A), flushed later: the recordings those waits were on (event 4 by corr 100 on stream 7; event 5
  // again by corr 200 on stream 8, nearer its wait than 150), and one of event 6 after its wait (corr 310: not it).
  w.activity(C.concat([rec(1, 4, 100, 7, 2), rec(1, 5, 200, 8, 3), rec(1, 6, 310, 9, 13)]));
  w.end();
  const { trace } = await toChrome(w.bytes(), {}, "late.rawtrace");
  const waits = new Map(trace.traceEvents.filter((e) => e.cat === "cuda_sync").map((e) => [e.args.correlation, e.args]));
  const pair = (c: number) => [waits.get(c)!.wait_on_stream, waits.get(c)!.wait_on_cuda_event_record_corr_id];
  assert.equal(pair(105), [7, 100]);
  assert.equal(pair(205), [8, 200]);
  assert.equal(pair(300), [-1, -1]);
});

test("many late recordings of one event (a step loop: one thread records each step, another waits, the waiter's buffer flushed first): every wait finds its own", async () => {
  const w = cudaWriter(L, T, 1);
  w.activity(C.concat([rec(1, 7, 5, 2, 1)])); // recorded once early, in order
  for (let block = 0; block < 30; block++) {
    // A buffer of six waits, then the buffer with the six recordings they wait on (each 1 below its wait).
    const ids = [...Array(6).keys()].map((k) => 100 + (block * 6 + k) * 10);
    w.activity(C.concat(ids.map((c, k) => wait(1, 7, c + 1, 10 + block * 6 + k))));
    w.activity(C.concat(ids.map((c, k) => rec(1, 7, c, 3 + (k % 4), 10 + block * 6 + k))));
  }
  w.end();
  const { trace } = await toChrome(w.bytes(), {}, "loop.rawtrace");
  const waits = trace.traceEvents.filter((e) => e.cat === "cuda_sync");
  assert.is(waits.length, 180);
  const wrong = waits.filter((e) => e.args.wait_on_cuda_event_record_corr_id !== e.args.correlation - 1 ||
    e.args.wait_on_stream !== 3 + (((e.args.correlation - 101) / 10) % 6) % 4);
  assert.is(wrong.length, 0, `${wrong.length} of 180 waits name another recording (first: ${JSON.stringify(wrong[0]?.args)})`);
});

test.run();
