/**
 * One benchmark measurement in its own process (so peak RSS is this task's alone). Prints one JSON line:
 * {task, seconds, bytesIn, bytesOut, events, maxRssMB}.
 *
 *   tsx bench/task.ts <floor|chrome|chrome-gz|peer> <file.rawtrace>
 */
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { createGzip } from "node:zlib";
import { createEngine } from "../src/node/wasm.js";
import { fileSource } from "../src/node/file_source.js";
import { peerConvert } from "./peer_ts.js";

const WINDOW = 4 << 20;
const [task, file] = process.argv.slice(2);
const bytesIn = statSync(file).size;

async function run(): Promise<{ bytesOut: number; events: number }> {
  switch (task) {
    case "floor": {
      // The same reads through the same 4 MiB window in WebAssembly memory, plus one copy out, no decoding.
      const mem = new WebAssembly.Memory({ initial: (2 * WINDOW) / 65536 });
      const win = new Uint8Array(mem.buffer, 0, WINDOW);
      const out = new Uint8Array(mem.buffer, WINDOW, WINDOW);
      const fd = openSync(file, "r");
      let total = 0;
      for (;;) {
        const n = readSync(fd, win, 0, WINDOW, null);
        if (n === 0) break;
        out.set(win.subarray(0, n));
        total += n;
      }
      closeSync(fd);
      return { bytesOut: total, events: 0 };
    }
    case "chrome": {
      const eng = await createEngine();
      const r = await eng.convert(fileSource(file), () => {});
      return { bytesOut: r.bytesOut, events: r.events };
    }
    case "chrome-gz": {
      const eng = await createEngine();
      const gz = createGzip({ chunkSize: 1 << 20 });
      let outBytes = 0;
      gz.on("data", (b: Buffer) => { outBytes += b.length; });
      let pending = false;
      const r = await eng.convert(fileSource(file), (b) => { if (!gz.write(Buffer.from(b))) pending = true; }, {
        afterWindow: () => pending ? new Promise<void>((res) => { pending = false; gz.once("drain", res); }) : undefined,
      });
      await new Promise<void>((res) => gz.end(res));
      return { bytesOut: outBytes, events: r.events };
    }
    case "peer": {
      let outBytes = 0;
      const events = peerConvert(file, (s) => { outBytes += Buffer.byteLength(s); });
      return { bytesOut: outBytes, events };
    }
  }
  throw new Error(`unknown task ${task}`);
}

const t0 = performance.now();
const r = await run();
const seconds = (performance.now() - t0) / 1000;
console.log(JSON.stringify({ task, seconds, bytesIn, ...r, maxRssMB: process.resourceUsage().maxRSS / 1024 }));
