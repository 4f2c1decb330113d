/** Node file access for the engine: a re-openable ByteSource over a path, read with positional reads. */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { basename } from "node:path";
import type { ByteSource } from "../core/engine.js";
import { RawtraceError } from "../core/codes.js";

/** A ByteSource reading `path` sequentially (each open() starts at byte 0). */
export function fileSource(path: string): ByteSource {
  let size: number | undefined;
  try {
    const fd = openSync(path, "r");
    size = fstatSync(fd).size;
    closeSync(fd);
  } catch (e) {
    throw new RawtraceError("IO", `${path}: cannot open: ${(e as Error).message}`, path);
  }
  return {
    name: basename(path),
    size,
    open() {
      const fd = openSync(path, "r");
      return {
        read(dst: Uint8Array) {
          return readSync(fd, dst, 0, dst.length, null);
        },
        close() {
          closeSync(fd);
        },
      };
    },
  };
}
