/**
 * The command line shared by the Kineto round-trip tools (kineto_to_rawtrace.ts, kineto_to_pti.ts,
 * kineto_to_rocprof.ts): `tool in.json[.gz] -o out.rawtrace [tool options]` parsing and the writing of the result
 * with its one-line summary.
 */
import { writeFileSync } from "node:fs";

/** A tool option: one that takes the next argument as its value, or a flag without one. */
export type ToolOption = { value: (v: string) => void } | { flag: () => void };

/**
 * Parses `argv`: one input path, `-o`/`--output` path, `-h`/`--help`, and the tool's own `options` (by exact name,
 * handlers called in argument order). Returns the input and output paths, or the exit code to return at once: 0
 * after printing `usage` for help, 2 after printing it with the offending argument or a missing path.
 */
export function parseToolArgs(
  argv: string[], usage: string, options: Record<string, ToolOption>,
): { input: string; output: string } | number {
  let input: string | undefined;
  let output: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const opt = Object.hasOwn(options, a) ? options[a] : undefined;
    if (a === "-o" || a === "--output") output = argv[++i];
    else if (opt && "value" in opt) opt.value(argv[++i]);
    else if (opt) opt.flag();
    else if (a === "-h" || a === "--help") {
      console.log(usage);
      return 0;
    } else if (!input && !a.startsWith("-")) input = a;
    else {
      console.error(`unexpected argument ${a}\n${usage}`);
      return 2;
    }
  }
  if (!input || !output) {
    console.error(usage);
    return 2;
  }
  return { input, output };
}

/** Writes `bytes` to `output` and prints `<output>: <N> bytes, <summary>`. */
export function writeToolOutput(output: string, bytes: Uint8Array, summary: string): void {
  writeFileSync(output, bytes);
  console.log(`${output}: ${bytes.length} bytes, ${summary}`);
}
