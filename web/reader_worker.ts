/**
 * The viewer's file-reader thread (its own esbuild entry: dist/web/reader.js), started by the core's worker for each
 * read of a File (web/slice_reader.ts `readerThreadStream`): reads the file in slices and transfers them, on a
 * thread that does nothing else, so reading overlaps with the core's decoding.
 */
import { serveSlices, type PortLike } from "./slice_reader.js";

serveSlices(self as unknown as PortLike);
