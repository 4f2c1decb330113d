/**
 * The kept-bytes codec (assembly/keep/, build/keep.wasm) for a host: packs blocks of bytes a host keeps in memory
 * between passes, and unpacks them again. Host-neutral (the viewer's reader thread packs what it read, the core's
 * worker unpacks it for the later passes: web/file_source.ts); both compile the same small module.
 *
 * A packed block is self-describing: u32 LE unpacked length, then the LZ sequences of assembly/keep/lz.ts.
 */

/** The keep module's exports (assembly/keep/index.ts). */
interface KeepExports {
  memory: WebAssembly.Memory;
  prepare(cap: number): number;
  inputPtr(): number;
  outputPtr(): number;
  bound(n: number): number;
  pack(n: number): number;
  unpack(m: number, n: number): number;
}

/** Bytes of the packed block's header (the unpacked length). */
const HEADER = 4;

/** One instance of the codec (its own memory: about 2 × the largest block + 256 KiB). Not thread-safe: one per thread. */
export class KeepCodec {
  private readonly x: KeepExports;
  private capacity = 0;
  private staged = -1;

  /** Instantiates `module` (build/keep.wasm, compiled by the caller). */
  constructor(module: WebAssembly.Module) {
    this.x = new WebAssembly.Instance(module, { env: { abort: () => { throw new Error("keep codec: abort"); } } }).exports as unknown as KeepExports;
  }

  private room(n: number): void {
    if (this.capacity > 0 && n <= this.capacity) return;
    n = Math.max(n, 1 << 16);
    if (!this.x.prepare(n)) throw new RangeError(`keep codec: a block of ${n} bytes is larger than the codec takes`);
    this.capacity = n;
  }

  /**
   * Packs `src` into a new Uint8Array of its own (the caller owns it; it holds no view of the codec's memory):
   * the u32 LE length of `src`, then its LZ sequences.
   */
  pack(src: Uint8Array): Uint8Array {
    this.stage(src);
    return this.packStaged();
  }

  /**
   * Copies `src` into the codec for {@link KeepCodec.packStaged}: the caller may hand `src`'s buffer on (transfer
   * it to another thread) before the packing itself runs.
   */
  stage(src: Uint8Array): void {
    this.room(src.length);
    new Uint8Array(this.x.memory.buffer, this.x.inputPtr(), src.length).set(src);
    this.staged = src.length;
  }

  /** Packs the bytes the last {@link KeepCodec.stage} copied in, as {@link KeepCodec.pack} does. */
  packStaged(): Uint8Array {
    const n = this.staged;
    if (n < 0) throw new Error("keep codec: nothing staged");
    this.staged = -1;
    const m = this.x.pack(n);
    const out = new Uint8Array(HEADER + m);
    new DataView(out.buffer).setUint32(0, n, true);
    out.set(new Uint8Array(this.x.memory.buffer, this.x.outputPtr(), m), HEADER);
    return out;
  }

  /** Unpacked length of a packed block (its header). */
  static unpackedLength(packed: Uint8Array): number {
    if (packed.length < HEADER) throw new RangeError(`keep codec: a packed block of ${packed.length} bytes has no header`);
    return new DataView(packed.buffer, packed.byteOffset, HEADER).getUint32(0, true);
  }

  /**
   * Unpacks `packed` into `dst` (at least {@link KeepCodec.unpackedLength} bytes; a new Uint8Array when not
   * given, owned by the caller) and returns the view of the unpacked bytes. Throws RangeError on a malformed block.
   */
  unpack(packed: Uint8Array, dst?: Uint8Array): Uint8Array {
    const n = KeepCodec.unpackedLength(packed);
    const m = packed.length - HEADER;
    this.room(n);
    this.staged = -1; // unpacking overwrites the input area
    if (m > this.x.bound(this.capacity)) throw new RangeError(`keep codec: a packed block of ${m} bytes is longer than any block of ${n}`);
    new Uint8Array(this.x.memory.buffer, this.x.outputPtr(), m).set(packed.subarray(HEADER));
    if (!this.x.unpack(m, n)) throw new RangeError(`keep codec: malformed packed block (${m} bytes, ${n} unpacked)`);
    const out = dst ? dst.subarray(0, n) : new Uint8Array(n);
    if (out.length < n) throw new RangeError(`keep codec: ${n} unpacked bytes do not fit in ${dst!.length}`);
    out.set(new Uint8Array(this.x.memory.buffer, this.x.inputPtr(), n));
    return out;
  }
}
