/**
 * Spilled text pool of the XSpace writer: the detail strings (`kernel_details`, `memcpy_details`, `Memset_details`)
 * grow with the distinct values a trace holds but are needed only at the end, when the stat metadata is written
 * after the lines. They are appended to a {@link BLOCK}-byte staging block; a full block goes to the conversion's
 * spill storage (util/spill.ts) and is read back, a block at a time, when a string is needed again (written at the
 * end in id order, or compared when a new string hashes like an old one). Memory: two blocks and 16 bytes per block
 * spilled.
 */
import { spillAppend, spillLoad } from "../util/spill";
import { bytesEq } from "./xspace_text";
import { regrow } from "../util/regrow";

/** Bytes of a pool block (staging and read-back). */
export const BLOCK: u32 = 65536;
/** Blocks the pool holds at most (positions are block << 16 | offset, below 2^32 - 1); beyond, callers keep text. */
const MAX_BLOCKS: u32 = 65535;

let stage: usize = 0;
let stageUsed: u32 = 0;
/** Index of the block being filled. */
let stageBlock: u32 = 0;
/** Spilled blocks: {spill offset u64, bytes u32, 0} each. */
let blocks: usize = 0;
let blockCap: u32 = 0;
let readBuf: usize = 0;
let readBlock: u32 = 0xffffffff;

/** Starts a file: an empty pool (the heap was rewound). */
export function poolBegin(): void {
  stage = 0;
  stageUsed = 0;
  stageBlock = 0;
  blocks = 0;
  blockCap = 0;
  readBuf = 0;
  readBlock = 0xffffffff;
}

/** Whether [p, p+n) can go to the pool ({@link poolAdd}): 1 ≤ n ≤ {@link BLOCK} and room for another block. */
export function poolFits(n: u32): bool {
  return n != 0 && n <= BLOCK && (stageUsed + n <= BLOCK || stageBlock + 1 < MAX_BLOCKS);
}

/** Adds the `n` bytes at `p` (see {@link poolFits}); returns their position for {@link poolAt}. */
export function poolAdd(p: usize, n: u32): u32 {
  if (stage == 0) stage = heap.alloc(BLOCK);
  if (stageUsed + n > BLOCK) poolFlush();
  const pos = (stageBlock << 16) | stageUsed;
  memory.copy(stage + stageUsed, p, n);
  stageUsed += n;
  return pos;
}

/** Sends the staging block to the spill storage and starts the next one. */
function poolFlush(): void {
  if (stageBlock == blockCap) {
    const cap = blockCap == 0 ? 64 : blockCap << 1;
    blocks = regrow(blocks, <usize>blockCap << 4, <usize>cap << 4);
    blockCap = cap;
  }
  const e = blocks + (<usize>stageBlock << 4);
  store<u64>(e, spillAppend(stage, stageUsed));
  store<u32>(e, stageUsed, 8);
  stageBlock++;
  stageUsed = 0;
}

/** Address of the string at pool position `pos`; valid until the next {@link poolAt} or {@link poolAdd}. */
export function poolAt(pos: u32): usize {
  const b = pos >> 16;
  const off = <usize>(pos & 0xffff);
  if (b == stageBlock) return stage + off;
  if (b != readBlock) {
    if (readBuf == 0) readBuf = heap.alloc(BLOCK);
    const e = blocks + (<usize>b << 4);
    spillLoad(load<u64>(e), readBuf, load<u32>(e, 8));
    readBlock = b;
  }
  return readBuf + off;
}

/**
 * Whether the string at pool position `pos` is the `n` bytes at `p` (its length is the caller's to check): a
 * spilled string is read alone, not its whole block (a name is compared when a new one hashes like it).
 */
export function poolEq(pos: u32, p: usize, n: u32): bool {
  const b = pos >> 16;
  const off = pos & 0xffff;
  if (b == stageBlock) return bytesEq(stage + off, n, p, n);
  if (b == readBlock) return bytesEq(readBuf + off, n, p, n);
  if (readBuf == 0) readBuf = heap.alloc(BLOCK);
  spillLoad(load<u64>(blocks + (<usize>b << 4)) + <u64>off, readBuf, n);
  readBlock = 0xffffffff; // readBuf holds a piece of a block now
  return bytesEq(readBuf, n, p, n);
}
