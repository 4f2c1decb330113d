/**
 * What the CLI benches (bench/batch.ts, bench/jobs.ts) set up first: the bundled CLI (built when missing), the
 * bench/data and bench/results folders, and the bench/generate.ts dump of `records` records (made once, kept in
 * bench/data). Returns the dump's path.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { ensureDump } from "./generate.js";

/** Builds dist/ when missing, makes bench/data and bench/results, returns bench/data/cupti_<records>.rawtrace. */
export function cliBenchSetup(records: number): string {
  if (!existsSync("dist/node/cli.js") || !existsSync("dist/node/worker.js")) {
    execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" });
  }
  mkdirSync("bench/data", { recursive: true });
  mkdirSync("bench/results", { recursive: true });
  const source = `bench/data/cupti_${records}.rawtrace`;
  ensureDump(records, source);
  return source;
}
