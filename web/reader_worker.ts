/**
 * The viewer's file-reader thread (its own esbuild entry: dist/web/reader.js), started by the core's worker for each
 * file it reads (web/slice_reader.ts `readerThreadStream`, `keepingReaderThread`): reads the file in slices and
 * transfers them, on a thread that does nothing else, so reading overlaps with the core's decoding; for a kept read
 * it also packs each slice (build/keep.wasm, emitted next to this script) and replays them for the later passes.
 */
import keepUrl from "../build/keep.wasm";
import { KeepCodec } from "../src/core/keep_codec.js";
import { serveSlices, type PortLike } from "./slice_reader.js";

let codec: Promise<KeepCodec> | null = null;
serveSlices(self as unknown as PortLike, () => {
  codec ??= WebAssembly.compileStreaming(fetch(new URL(keepUrl, import.meta.url))).then((m) => new KeepCodec(m));
  return codec;
});
