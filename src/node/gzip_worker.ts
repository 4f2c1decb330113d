/**
 * Worker thread of the gzip pool (src/node/gzip_pool.ts): holds one instance of rawtrace's gzip encoder
 * (src/node/fast_gzip.ts) and answers each {@link GzipRequest} with the gzip member of its bytes, or an error
 * message, and gives the block's buffer back for the next block. The ArrayBuffers move (are transferred), never
 * copied between threads.
 */
import { parentPort } from "node:worker_threads";
import { FastGzip } from "./fast_gzip.js";
import { WORKER_READY } from "./worker_start.js";

/** A block to compress: the first `length` bytes of `buffer`; `seq` names it in the answer. */
export interface GzipRequest {
  seq: number;
  buffer: ArrayBuffer;
  length: number;
}

/** The member of block `seq` (`member`), or why there is none (`error`); `buffer` is the block's, given back for reuse. */
export interface GzipAnswer {
  seq: number;
  buffer: ArrayBuffer;
  member?: ArrayBuffer;
  error?: string;
}

if (parentPort) {
  const port = parentPort;
  const gz = new FastGzip();
  port.on("message", (m: GzipRequest) => {
    let answer: GzipAnswer;
    try {
      const out = gz.gzip(new Uint8Array(m.buffer, 0, m.length));
      answer = { seq: m.seq, buffer: m.buffer, member: out.buffer as ArrayBuffer };
    } catch (e) {
      answer = { seq: m.seq, buffer: m.buffer, error: (e as Error).message };
    }
    port.postMessage(answer, answer.member ? [answer.member, m.buffer] : [m.buffer]);
  });
  port.postMessage(WORKER_READY); // loaded: the pool may terminate this thread safely from now on (stopWorker)
}
