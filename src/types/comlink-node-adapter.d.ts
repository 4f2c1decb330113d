/**
 * Types of comlink's Node adapter: TypeScript finds no declarations for the deep `.mjs` import (TS7016), so this
 * shim re-states the one it ships as dist/esm/node-adapter.d.ts.
 */
declare module "comlink/dist/esm/node-adapter.mjs" {
  import type { Endpoint } from "comlink";
  /** Anything with Node's `on`/`off`/`postMessage` (a Worker, a MessagePort, parentPort). */
  export interface NodeEndpoint {
    postMessage(message: any, transfer?: any[]): void;
    on(type: string, listener: (...args: any[]) => void, options?: {}): void;
    off(type: string, listener: (...args: any[]) => void, options?: {}): void;
    start?: () => void;
  }
  /** Adapts a Node endpoint to comlink's Endpoint. */
  export default function nodeEndpoint(nep: NodeEndpoint): Endpoint;
}
