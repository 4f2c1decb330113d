/**
 * Worker-thread entry of the batch pipeline (its own esbuild entry point: dist/node/worker.js): exposes
 * {@link workerApi} (src/node/worker_api.ts) over comlink to the pool that started this thread, with the progress
 * cells the pool passed in `workerData`. Only this module has that side effect; nothing else imports it.
 */
import { parentPort, workerData } from "node:worker_threads";
import * as Comlink from "comlink";
import nodeEndpoint from "comlink/dist/esm/node-adapter.mjs";
import { workerApi } from "./worker_api.js";
import { sendErrorDetails } from "./worker_errors.js";
import { WORKER_READY } from "./worker_start.js";

if (parentPort) {
  sendErrorDetails();
  const cells = workerData?.progress ? new BigInt64Array(workerData.progress as SharedArrayBuffer) : null;
  Comlink.expose(workerApi(cells), nodeEndpoint(parentPort));
  parentPort.postMessage(WORKER_READY); // loaded: the pool may terminate this thread safely from now on (stopWorker)
}
