/** Test helpers: build small dumps with the TS writer and convert them with one shared engine instance. */
import { Engine, memorySource, type ByteSource, type ConvertOptions, type ConvertResult, type FileInfo } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";

let shared: Engine | null = null;
async function engine(): Promise<Engine> {
  shared ??= await createEngine();
  return shared;
}

/** A Chrome trace as parsed JSON. */
export interface ChromeTrace {
  traceEvents: Array<Record<string, any>>;
  [k: string]: any;
}

/** Converts bytes to Chrome JSON; returns the raw text, the parsed trace and the result. */
export async function toChrome(
  bytes: Uint8Array, opts: ConvertOptions = {}, name = "test.rawtrace",
): Promise<{ text: string; trace: ChromeTrace; result: ConvertResult }> {
  const parts: Buffer[] = [];
  const result = await (await engine()).convert(memorySource(bytes, name), (b) => parts.push(Buffer.from(b)), opts);
  const text = Buffer.concat(parts).toString("utf8");
  return { text, trace: JSON.parse(text), result };
}

/** Pass 1 only. */
export async function info(bytes: Uint8Array, name = "test.rawtrace"): Promise<FileInfo> {
  return (await engine()).info(memorySource(bytes, name));
}

/** Events of a category (cat) and phase. */
export function events(t: ChromeTrace, cat: string, ph = "X"): Array<Record<string, any>> {
  return t.traceEvents.filter((e) => e.cat === cat && e.ph === ph);
}

/** The warning `code` of a conversion result (count, file offset of its first occurrence), or undefined. */
export function warningOf(
  r: { info: { warnings: Array<{ code: string; count: number; offset: number }> } }, code: string,
): { code: string; count: number; offset: number } | undefined {
  return r.info.warnings.find((w) => w.code === code);
}

/** A source of `bytes` that hands out at most `piece` bytes per read (the reader's decisions must not depend on reads). */
export function trickle(bytes: Uint8Array, piece: number): ByteSource {
  return {
    name: "test.rawtrace",
    size: bytes.length,
    open() {
      let off = 0;
      return {
        read(dst: Uint8Array) {
          const n = Math.min(dst.length, piece, bytes.length - off);
          dst.set(bytes.subarray(off, off + n));
          off += n;
          return n;
        },
      };
    },
  };
}
