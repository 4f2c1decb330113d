/**
 * The built command line (`node dist/node/cli.js`) run in a folder, as the tests of test/cli/ run it, and the check of
 * a usage error as docs/errors.md describes it: exit 2, nothing on standard output, one line `rawtrace: usage: …`.
 */
import * as assert from "uvu/assert";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const CLI = join(ROOT, "dist/node/cli.js");

/** The non-empty lines of `s`. */
export const lines = (s: string) => s.split("\n").filter((l) => l.length > 0);

/** `cli(args, stdin?)` runs the CLI in `cwd`; `usageError(args, mentions, stdin?)` asserts a usage error mentioning `mentions`. */
export function cliIn(cwd: string) {
  const cli = (args: string[], input?: Buffer) =>
    spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: "utf8", timeout: 120000, input });
  const usageError = (args: string[], mentions: string, input?: Buffer): void => {
    const r = cli(args, input);
    assert.is(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.is(r.stdout, "");
    assert.is(lines(r.stderr).length, 1, r.stderr);
    assert.ok(r.stderr.startsWith("rawtrace: usage: "), r.stderr);
    assert.ok(r.stderr.includes(mentions), r.stderr);
  };
  return { cli, usageError };
}
