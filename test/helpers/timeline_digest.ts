/**
 * A canonical digest of everything the viewer's timeline tables hold for a dump: the header, rows, lanes, names,
 * the summary trailer and all 16 words of every event in index order (words 12..15 through the extension
 * entries). Two ways of producing the tables give the same digest exactly when the page would see the same data.
 */
import { createHash } from "node:crypto";
import { createEngine } from "../../src/node/wasm.js";
import { memorySource, type Engine } from "../../src/core/engine.js";
import { TimelineEvents, TimelineParser, type TimelineMeta } from "../../src/core/timeline.js";

/** The tables of `bytes` as the page gets them (header, rows, lanes, names, trailer, events). */
export async function timelineOf(
  bytes: Uint8Array, name = "t.rawtrace", setup?: (engine: Engine) => void,
): Promise<{ meta: TimelineMeta; events: TimelineEvents }> {
  const engine = await createEngine();
  setup?.(engine);
  const events = new TimelineEvents();
  const parser = new TimelineParser((chunk) => events.add(chunk));
  await engine.convert(memorySource(bytes, name), parser.sink, { format: "timeline" });
  return { meta: parser.finish(), events };
}

/** SHA-256 (hex) of the canonical form of the tables. */
export function timelineDigest(meta: TimelineMeta, events: TimelineEvents): string {
  const h = createHash("sha256");
  const hd = meta.header;
  h.update(JSON.stringify({ ...hd, baseNs: String(hd.baseNs) }));
  h.update(new Uint8Array(meta.rows.buffer, meta.rows.byteOffset, meta.rows.byteLength));
  h.update(new Uint8Array(meta.lanes));
  h.update(new Uint8Array(meta.nameIndex.buffer, meta.nameIndex.byteOffset, meta.nameIndex.byteLength));
  h.update(meta.nameBytes);
  h.update(meta.trailer);
  const words = new Uint32Array(16 * 4096);
  let k = 0;
  for (let i = 0; i < events.length; i++) {
    for (let w = 0; w < 16; w++) words[k++] = events.word(i, w);
    if (k === words.length) {
      h.update(new Uint8Array(words.buffer));
      k = 0;
    }
  }
  h.update(new Uint8Array(words.buffer, 0, k * 4));
  return h.digest("hex");
}
