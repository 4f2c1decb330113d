import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync, readdirSync } from "node:fs";
import { WARN_NAMES, WARN_MESSAGES, FATAL_NAMES, LOSS_WARNINGS, isLossWarning } from "../../src/core/codes.js";

const src = (p: string) => readFileSync(new URL(`../../${p}`, import.meta.url), "utf8");

test("warning names of the core (assembly/util/error_names.ts) equal the host's, code for code", () => {
  const asNames = [...src("assembly/util/error_names.ts").matchAll(/case (\d+): return "([A-Z_]+)";/g)];
  assert.is(asNames.length, WARN_NAMES.length);
  for (const [, code, name] of asNames) assert.is(WARN_NAMES[Number(code)], name, `code ${code}`);
  const enumCodes = [...src("assembly/util/error.ts").matchAll(/^\s+([A-Z_]+) = (\d+),$/gm)];
  const warnEnum = enumCodes.filter(([, n]) => (WARN_NAMES as readonly string[]).includes(n));
  for (const [, name, code] of warnEnum) assert.is(WARN_NAMES[Number(code)], name);
  assert.ok(src("assembly/util/error.ts").includes(`WARN_COUNT: i32 = ${WARN_NAMES.length};`));
});

test("every warning has a message and every code is documented in docs/errors.md", () => {
  const doc = src("docs/errors.md");
  for (const n of WARN_NAMES) {
    assert.ok(WARN_MESSAGES[n], n);
    assert.ok(doc.includes(`| ${n} |`), `${n} in docs/errors.md`);
  }
  for (const n of FATAL_NAMES.slice(1)) if (n !== "API_MISUSE") assert.ok(doc.includes(`| ${n} |`), n);
});

test("LOSS_WARNINGS: known codes, dropped records among them, the expected ones not", () => {
  for (const n of LOSS_WARNINGS) assert.ok((WARN_NAMES as readonly string[]).includes(n), n);
  for (const n of ["BAD_TIMESTAMP", "NEGATIVE_DURATION", "DROPPED_RECORDS", "TRUNCATED"]) assert.ok(isLossWarning(n), n);
  for (const n of ["INCOMPLETE_RECORD", "UNKNOWN_KIND", "DUPLICATE_CHUNK"]) assert.not.ok(isLossWarning(n), n);
});

test("docs/xspace.md names every code XSpace writes to XSpace.errors (assembly/emit/xspace_diag.ts isDataLoss)", () => {
  const fn = src("assembly/emit/xspace_diag.ts").split("export function isDataLoss")[1].split("\n}")[0];
  const codes = [...fn.matchAll(/Warn\.([A-Z_]+)/g)].map((m) => m[1]);
  assert.ok(codes.length > 10, "the list was read");
  const doc = src("docs/xspace.md");
  const para = doc.slice(doc.indexOf("Codes that mean data was lost"), doc.indexOf("`XSpace.errors` instead"));
  assert.ok(para.length > 0, "the paragraph was found");
  for (const c of codes) assert.ok(new RegExp(`\\b${c}\\b`).test(para), `${c} in docs/xspace.md's XSpace.errors list`);
});

test("XSpace.errors holds every loss code but DROPPED_RECORDS (XLA's dropped-events line says those)", () => {
  const fn = src("assembly/emit/xspace_diag.ts").split("export function isDataLoss")[1].split("\n}")[0];
  const codes = new Set([...fn.matchAll(/Warn\.([A-Z_]+)/g)].map((m) => m[1]));
  assert.equal([...codes].sort(), [...LOSS_WARNINGS].filter((c) => c !== "DROPPED_RECORDS").sort());
});

test("docs/errors.md \"Damage\" names every warning that skips a byte range (each lose() of assembly/)", () => {
  const walk = (d: string): string[] => readdirSync(new URL(`../../${d}`, import.meta.url), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? walk(`${d}/${e.name}`) : e.name.endsWith(".ts") ? [`${d}/${e.name}`] : []));
  const codes = new Set(walk("assembly").flatMap((f) => [...src(f).matchAll(/\blose\(Warn\.([A-Z_]+)/g)].map((m) => m[1])));
  assert.ok(codes.has("TRUNCATED") && codes.size > 5, "the codes were read");
  const doc = src("docs/errors.md");
  const at = doc.indexOf("## Damage: the bytes skipped");
  const para = doc.slice(at, doc.indexOf("They appear", at));
  for (const c of codes) assert.ok(new RegExp(`\\b${c}\\b`).test(para), `${c} in docs/errors.md's list of skipped ranges`);
});

test.run();
