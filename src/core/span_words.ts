/**
 * A span of time in words, for people reading a message: how far apart two runs were recorded (the viewer's aligned
 * files) or how far a rank's clock is off (merge's clock skew).
 */

const YEAR_S = 365.25 * 86400;

/**
 * `ns` in words: "412 ms", "78.7 s", "1 h 18 min 32 s" (at most three units, zero ones left out: "3 d 5 min"), and
 * from a year on "3.15 years" (the unit chosen after rounding: 364.99 days is "1.00 years").
 */
export function spanWords(ns: number): string {
  const s = ns / 1e9;
  if (s < 1) return `${Math.round(ns / 1e6)} ms`;
  if (s < 100) return `${s.toFixed(1)} s`;
  if (s >= YEAR_S * 0.995) return `${(s / YEAR_S).toFixed(2)} years`;
  const units: Array<[string, number]> = [["d", 86400], ["h", 3600], ["min", 60], ["s", 1]];
  const parts: string[] = [];
  let rest = Math.round(s);
  for (const [u, n] of units) {
    const k = Math.floor(rest / n);
    rest -= k * n;
    if (k > 0 || parts.length) parts.push(`${k} ${u}`);
  }
  // Three units are plenty: "3 d 2 h 5 min", not down to the second.
  return parts.slice(0, 3).filter((p) => !p.startsWith("0 ")).join(" ");
}
