/**
 * rawtrace's own gzip encoder (assembly/deflate, build/deflate.wasm) from Node: {@link FastGzip.gzip} turns a byte
 * array into one gzip member (RFC 1952) that any gunzip reads. It trades size for speed against zlib (greedy
 * matching, one hash probe per position; docs/performance/gzip.md has the figures). Each
 * instance owns its WebAssembly memory; a worker thread holds one (src/node/gzip_pool.ts).
 */
import { wasmFlags } from "./wasm_flags.js";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { crc32 } from "node:zlib";
import { RawtraceError } from "../core/codes.js";

let compiled: WebAssembly.Module | null = null;

/** Path of the encoder's .wasm: next to the bundle (dist/node/deflate.wasm) or in build/ when run from source. */
export function deflateWasmPath(): string {
  const candidates = [new URL("./deflate.wasm", import.meta.url), new URL("../../build/deflate.wasm", import.meta.url)].map((u) => fileURLToPath(u));
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new RawtraceError("NO_CORE", `rawtrace gzip encoder not built: none of ${candidates.join(", ")} exists (run npm run build)`);
  return found;
}

interface DeflateExports {
  memory: WebAssembly.Memory;
  prepare(cap: number): number;
  inputPtr(): number;
  outputPtr(): number;
  gzip(n: number): number;
  gzipWithCrc(n: number, crc: number): number;
  gzipBound(n: number): number;
}

/** Most input bytes one member may hold (the encoder's MAX_CAPACITY: 256 MiB). */
export const FAST_GZIP_MAX_BYTES = 1 << 28;

/** One instance of the encoder. */
export class FastGzip {
  private readonly x: DeflateExports;
  private cap = 0;

  constructor() {
    if (!compiled) {
      wasmFlags();
      compiled = new WebAssembly.Module(readFileSync(deflateWasmPath()));
    }
    const inst = new WebAssembly.Instance(compiled, {
      env: {
        abort: () => {
          throw new RawtraceError("INTERNAL", "gzip encoder aborted");
        },
      },
    });
    this.x = inst.exports as unknown as DeflateExports;
  }

  /** Compresses `data` (at most {@link FAST_GZIP_MAX_BYTES} bytes) into one gzip member, a new array. */
  gzip(data: Uint8Array): Uint8Array {
    const n = data.length;
    if (n > FAST_GZIP_MAX_BYTES) throw new RangeError(`gzip block of ${n} bytes is above the encoder's limit of ${FAST_GZIP_MAX_BYTES}`);
    if (n > this.cap || this.cap === 0) {
      const want = Math.max(n, 1 << 16);
      if (this.x.prepare(want) !== 1) throw new RangeError(`gzip encoder could not prepare ${want} bytes`);
      this.cap = want;
    }
    new Uint8Array(this.x.memory.buffer, this.x.inputPtr(), n).set(data);
    // The CRC-32 by Node's zlib (about 1.7× the speed of the encoder's own, assembly/util/crc32.ts, here).
    const len = this.x.gzipWithCrc(n, crc32(data));
    if (len === 0) throw new RawtraceError("INTERNAL", `gzip encoder refused ${n} bytes (capacity ${this.cap})`);
    return new Uint8Array(this.x.memory.buffer, this.x.outputPtr(), len).slice();
  }
}
