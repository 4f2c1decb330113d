/** Test helpers: build small dumps with the TS writer and convert them with one shared engine instance. */
import { Engine, memorySource, type ConvertOptions, type ConvertResult, type FileInfo } from "../../src/core/engine.js";
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
