/**
 * What the host and the workers of one shared conversion have in common (`convert` of one Chrome JSON input:
 * src/node/split.ts, src/node/worker_api.ts `part`, assembly/split.ts): the part a worker runs, the cells they
 * synchronise on, the messages carrying the output, and the worker's side of that hand-over ({@link segmentOutput}).
 *
 * A worker copies what its segments write into pieces of {@link PIECE_BYTES} and posts each full piece, and each
 * segment's last one, to the host (the buffer transferred, not copied); the host writes them in segment order and
 * gives each buffer back. At most {@link PIECES_IN_FLIGHT} of a worker's pieces are out at once, so memory stays
 * bounded whatever the file's size: a worker that gets that far ahead of the writer waits for a buffer.
 */
import { receiveMessageOnPort, type MessagePort } from "node:worker_threads";
import { RawtraceError } from "../core/codes.js";
import type { SplitPart, SplitState } from "../core/engine.js";

/**
 * One worker's part of a shared conversion: it emits segments `worker`, `worker` + `workers`, … of the file's
 * ACTIVITY chunks (assembly/split.ts).
 */
export interface PartJob {
  worker: number;
  workers: number;
  segments: number;
  /**
   * To the host: the pieces of the segments this worker owns ({@link SegmentMessage}). From the host: buffers given
   * back ({@link FreeMessage}) and, to the end writer (worker `workers` − 1), the other workers' state or
   * `{ abort: true }`.
   */
  port: MessagePort;
  /** {@link splitCellsBytes} over a SharedArrayBuffer: the {@link SplitCell} cells, then {@link returnedCell}s. */
  cells: SharedArrayBuffer;
  /** Bytes per piece and pieces in flight (default {@link PIECE_BYTES}, {@link PIECES_IN_FLIGHT}; tests lower them). */
  pieceBytes?: number;
  piecesInFlight?: number;
}

/** Int32 cells shared by the host and the workers of one shared conversion. */
export const SplitCell = {
  /** Non-zero: the conversion failed elsewhere; stop. */
  ABORT: 0,
  /** 1 when the other workers' state is on the end writer's port. */
  STATE: 1,
} as const;
/** Int32 index of worker `k`'s count of buffers given back. */
export const returnedCell = (k: number) => 2 + k;
/** Bytes of the cells' SharedArrayBuffer for `workers` workers. */
export const splitCellsBytes = (workers: number) => 8 + 4 * workers;

/**
 * A piece of a segment's bytes, posted by the worker that emitted it: `len` bytes at the start of `buf`
 * (transferred; the host sends it back as a {@link FreeMessage} once written). `last`: the segment's final piece;
 * `wrote`: the worker had then written an event since its header (what decides, after segment 0, whether the next
 * non-empty segment keeps its leading comma).
 */
export interface SegmentMessage {
  segment: number;
  buf: ArrayBuffer;
  len: number;
  last: boolean;
  wrote: boolean;
}

/** A buffer given back to the worker that posted it. */
export interface FreeMessage {
  free: ArrayBuffer;
}

/** Bytes of a piece: the host writes this much at a time. */
export const PIECE_BYTES = 4 << 20;
/** Pieces a worker may have posted and not yet got back (64 MiB): bounds its memory. */
export const PIECES_IN_FLIGHT = 16;

type FromHost = Partial<FreeMessage> & Partial<SplitState> & { abort?: boolean };

/**
 * The worker's side of one part: the sink and the {@link SplitPart} hooks to give the core, and `finish()` to call
 * after the conversion (it checks that no byte was left outside a segment). `input` names the file in errors.
 */
export function segmentOutput(part: PartJob, input: string): {
  sink: (b: Uint8Array) => void; split: SplitPart; finish: () => void;
} {
  const cells = new Int32Array(part.cells);
  const cell = returnedCell(part.worker);
  const pieceBytes = part.pieceBytes ?? PIECE_BYTES;
  const inFlight = part.piecesInFlight ?? PIECES_IN_FLIGHT;
  const failedElsewhere = () => new RawtraceError("INTERNAL", `${input}: another worker of the split conversion failed`, input);
  const free: ArrayBuffer[] = [];
  let posted = 0;
  let got = 0;
  /** The other workers' state, when it came while buffers given back were being received. */
  let state: FromHost | undefined;
  /** Takes what the host has sent so far. */
  const receive = () => {
    let m: FromHost | undefined;
    while ((m = receiveMessageOnPort(part.port)?.message as FromHost | undefined)) {
      if (m.free) {
        free.push(m.free);
        got++;
      } else state = m;
    }
  };
  /** A buffer to fill: one given back, a new one while fewer than PIECES_IN_FLIGHT are out, else wait for one. */
  const nextBuffer = (): Uint8Array => {
    for (;;) {
      const b = free.pop();
      if (b) return new Uint8Array(b);
      receive();
      if (free.length !== 0) continue;
      if (posted - got < inFlight) return new Uint8Array(pieceBytes);
      if (Atomics.load(cells, SplitCell.ABORT) !== 0) throw failedElsewhere();
      Atomics.wait(cells, cell, got, 1000);
    }
  };
  // The end writer of several workers waits for the others' rows; a single worker has the whole file's already.
  const takeEarlier = part.workers > 1 && part.worker === part.workers - 1 ? () => {
    for (;;) {
      receive();
      if (state) {
        if (state.abort) throw failedElsewhere();
        return state as SplitState;
      }
      // The host posts the state before it sets STATE: the next receive() finds it.
      Atomics.wait(cells, SplitCell.STATE, 0);
    }
  } : undefined;

  /** The piece being filled (null after a segment's last piece: the next is taken when bytes come). */
  let buf: Uint8Array | null = null;
  let len = 0;
  /** The segment being emitted (-1: bytes before the next segment event belong to the segment that event ends). */
  let current = -1;
  const post = (segment: number, last: boolean, wrote: boolean) => {
    // A segment that wrote nothing still ends with a piece: an empty buffer, neither counted nor given back.
    const m: SegmentMessage = { segment, buf: buf ? buf.buffer as ArrayBuffer : new ArrayBuffer(0), len, last, wrote };
    part.port.postMessage(m, [m.buf]);
    if (buf) posted++;
    buf = null;
    len = 0;
  };
  return {
    // The core's window is reused after the call: its bytes are copied into pieces.
    sink: (b) => {
      let off = 0;
      while (off < b.length) {
        buf ??= nextBuffer();
        const n = Math.min(b.length - off, buf.length - len);
        buf.set(b.subarray(off, off + n), len);
        len += n;
        off += n;
        if (len === buf.length) {
          if (current >= 0) post(current, false, false);
          else {
            // Bytes whose segment is named only by its end (an empty segment's header or end): kept together.
            const bigger = new Uint8Array(buf.length * 2);
            bigger.set(buf);
            buf = bigger;
          }
        }
      }
    },
    split: {
      worker: part.worker, workers: part.workers, segments: part.segments, takeEarlier,
      onSegment: (segment, event) => {
        if (event === 0) {
          current = segment;
          return;
        }
        post(segment, true, event === 2);
        current = -1;
      },
    },
    finish: () => {
      if (len !== 0) throw new RawtraceError("INTERNAL", `${input}: bytes of the split conversion outside every segment`, input);
    },
  };
}
