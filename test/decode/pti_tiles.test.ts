/**
 * Tiles under Level Zero's COMPOSITE hierarchy (issue 15): a card is one device and its tiles are sub-devices, whose
 * work PTI records under the tile's own UUID (and, in `_v2` records, handle). The XPU collector lists every device
 * and sub-device handle after the DEVICES entries (docs/format.md §7); the decoder puts a tile's work on its root
 * device (Chrome pid, XSpace plane) with the tile shown: the `tile` arg, the row "stream Q (tile N)", the XSpace line
 * "tile N (Stream #Q(...))". Crafted dumps (test/helpers/pti_records.ts); the collector's own output under the Level
 * Zero double's COMPOSITE mode is checked in pti_collector.test.ts.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";
import { memorySource } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { toChrome, events, warningOf } from "../helpers/convert.js";
import { apiCall, kernel, ptiDump } from "../helpers/pti_records.js";
import { readDumpChunks } from "../helpers/dump_chunks.js";
import { ChunkType } from "../../src/format/container.js";
import { deviceUuid, type PtiGen } from "../../src/tools/kineto_to_pti.js";

/** The UUID of tile `t` of device `d` (any 16 bytes other than the root's: Level Zero gives each its own). */
function tileUuid(d: number, t: number): Uint8Array {
  const u = deviceUuid(d).slice();
  u[15] = 0x80 + t;
  return u;
}

/** Handle table: devices 0 and 1 (handles 0x1000 + d) and two tiles each (0x2000 + 16d + t). */
const HANDLES = [0, 1].flatMap((d) => [
  { handle: BigInt(0x1000 + d), uuid: deviceUuid(d), device: d },
  ...[0, 1].map((t) => ({ handle: BigInt(0x2000 + 16 * d + t), uuid: tileUuid(d, t), device: d, tile: t })),
]);

/** Kernels: one on each tile of device 1 by UUID, one on device 0 itself, one on tile 1 of device 0 by handle only. */
function dump(gen: PtiGen): Uint8Array {
  const recs = [
    apiCall(6, 17, 1, 100, 200), kernel(gen, 1, 1000, 2000, { uuid: tileUuid(1, 0), queue: 110n }),
    apiCall(6, 17, 2, 300, 400), kernel(gen, 2, 2000, 3500, { uuid: tileUuid(1, 1), queue: 111n }),
    apiCall(6, 17, 3, 500, 600), kernel(gen, 3, 4000, 4500, { dev: 0, queue: 1n }),
  ];
  if (gen === "1.2") {
    recs.push(apiCall(6, 17, 4, 700, 800),
      kernel(gen, 4, 5000, 7000, { uuid: new Uint8Array(16), handle: 0x2001n, queue: 101n }));
  }
  return ptiDump([recs], { gen, handles: HANDLES });
}

for (const gen of ["0.17", "1.2"] as const) {
  test(`PTI ${gen}: a tile's kernels on their root device with the tile as arg and in the stream row; no warning`, async () => {
    const { trace, result } = await toChrome(dump(gen));
    assert.equal(result.info.warnings, []);
    assert.is(trace.deviceProperties.length, 2, "tiles are no devices of their own");
    const k = events(trace, "kernel").map((e) => [e.pid, e.tid, e.args.tile, e.dur]);
    const want = [[1, 110, 0, 1], [1, 111, 1, 1.5], [0, 1, undefined, 0.5]];
    if (gen === "1.2") want.push([0, 101, 1, 2]); // all-zero UUID: found by its _v2 handle
    assert.equal(k, want);
    const rows = trace.traceEvents.filter((e) => e.ph === "M" && e.name === "thread_name" && e.pid <= 1)
      .map((e) => `${e.pid}/${e.tid}/${e.args.name}`).sort();
    const wantRows = ["0/1/stream 1", "1/110/stream 110 (tile 0)", "1/111/stream 111 (tile 1)"];
    if (gen === "1.2") wantRows.push("0/101/stream 101 (tile 1)");
    assert.equal(rows, wantRows.sort());
  });
}

test("XSpace: a line per (tile, queue) on the root device's plane, no plane for a tile", async () => {
  const engine = await createEngine();
  const parts: Buffer[] = [];
  await engine.convert(memorySource(dump("1.2")), (b) => parts.push(Buffer.from(b)), { format: "xspace" });
  const s = fromBinary(XSpaceSchema, Buffer.concat(parts));
  assert.equal(s.planes.filter((p) => p.name.startsWith("/device:GPU:")).map((p) => p.name).sort(),
    ["/device:GPU:0", "/device:GPU:1"]);
  const lines = (d: number) => s.planes.find((p) => p.name === `/device:GPU:${d}`)!.lines
    .filter((l) => l.events.length).map((l) => `${l.displayName || l.name}: ${l.events.length}`).sort();
  assert.equal(lines(1), ["tile 0 (Stream #110(Compute)): 1", "tile 1 (Stream #111(Compute)): 1"]);
  assert.equal(lines(0), ["Stream #1(Compute): 1", "tile 1 (Stream #101(Compute)): 1"]);
});

test("a handle table longer than its chunk: BAD_PAYLOAD, the tiles' UUIDs become unknown devices", async () => {
  const dev = ptiDump([[]], { handles: HANDLES });
  // Re-write the DEVICES payload with the table's count raised past its bytes.
  const good = devicesPayload(dev);
  const bad = good.slice();
  const at = good.length - 32 * HANDLES.length - 4;
  new DataView(bad.buffer).setUint32(at, HANDLES.length + 1, true);
  const { result } = await toChrome(ptiDump([[apiCall(6, 17, 1, 100, 200),
    kernel("1.2", 1, 1000, 2000, { uuid: tileUuid(1, 0), queue: 110n })]], { devicesRaw: bad }));
  assert.ok(warningOf(result, "BAD_PAYLOAD"), JSON.stringify(result.info.warnings));
  assert.is(warningOf(result, "UNKNOWN_DEVICE")?.count, 1);
});

/** The DEVICES payload of a dump. */
function devicesPayload(bytes: Uint8Array): Uint8Array {
  return new Uint8Array(readDumpChunks(Buffer.from(bytes)).find((c) => c.type === ChunkType.DEVICES)!.p);
}

test.run();
