/**
 * Errors thrown in a rawtrace worker thread reach the pool (src/node/pool.ts) through comlink, whose own "throw"
 * handler sends only an Error's name, message and stack: a RawtraceError's `file` and `offset` (docs/node-api.md:
 * kept "when known") were lost on the way. The worker installs this handler, which sends them too; comlink's
 * receiving side copies every sent field onto the Error it rebuilds.
 */
import * as Comlink from "comlink";

type Thrown = { value: unknown };
type Serialized = { isError: boolean; value: Record<string, unknown> };

/** Makes comlink's "throw" handler of this thread send `file` and `offset` with an Error (idempotent). */
export function sendErrorDetails(): void {
  const base = Comlink.transferHandlers.get("throw") as Comlink.TransferHandler<Thrown, Serialized> | undefined;
  if (!base || (base as { rawtrace?: boolean }).rawtrace) return;
  const handler: Comlink.TransferHandler<Thrown, Serialized> & { rawtrace: boolean } = {
    rawtrace: true,
    canHandle: base.canHandle,
    serialize(thrown) {
      const [out, transfer] = base.serialize(thrown);
      const e = thrown.value as { file?: unknown; offset?: unknown } | null;
      if (out.isError && e !== null && typeof e === "object") {
        if (typeof e.file === "string") out.value.file = e.file;
        if (typeof e.offset === "number") out.value.offset = e.offset;
      }
      return [out, transfer];
    },
    deserialize: base.deserialize,
  };
  Comlink.transferHandlers.set("throw", handler as unknown as Comlink.TransferHandler<unknown, unknown>);
}
