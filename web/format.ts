/** Number formatting for the viewer (ns in, text out). */

/** Exact µs with three decimals, as the Chrome JSON writes durations: 2501 → "2.501". */
export function usExact(ns: number): string {
  const neg = ns < 0;
  const v = Math.round(Math.abs(ns));
  const s = `${Math.floor(v / 1000)}.${String(v % 1000).padStart(3, "0")}`;
  return neg ? `-${s}` : s;
}

/** A short human duration: "840 ns", "12.3 µs", "4.56 ms", "1.234 s". */
export function dur(ns: number): string {
  const a = Math.abs(ns);
  // The unit is chosen by the value as it will be shown (rounded): 999.6 ns is "1.000 µs" and 999,999 ns "1.000 ms",
  // not "1000 ns" and "1000.0 µs" (before 2026-12-03).
  if (a < 999.5) return `${Math.round(ns)} ns`;
  if (a < 999_950) return `${trim(ns / 1e3)} µs`;
  if (a < 999_950_000) return `${trim(ns / 1e6)} ms`;
  return `${trim(ns / 1e9)} s`;
}

function trim(v: number): string {
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(1) : a >= 10 ? v.toFixed(2) : v.toFixed(3);
}

/** Bytes: "512 B", "1.50 KiB", "3.00 GiB". */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const u = ["KiB", "MiB", "GiB", "TiB"];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(2)} ${u[i]}`;
}

/** Integer with thousands separators. */
export function int(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** A 1-2-5 step of at least `min` ns. */
export function niceStep(min: number): number {
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(min, 1e-3))));
  for (const m of [1, 2, 5, 10]) if (m * p >= min) return m * p;
  return 10 * p;
}

/**
 * Axis label of a time (ns since the trace start) for a tick step, in the unit of the step, its whole part in groups
 * of three digits: zoomed into a long trace the labels are large numbers ("6,205,500 µs", not "6205500 µs").
 */
export function tick(ns: number, step: number): string {
  const [unit, name] = step >= 1e9 ? [1e9, "s"] : step >= 1e6 ? [1e6, "ms"] : step >= 1e3 ? [1e3, "µs"] : [1, "ns"];
  const decimals = Math.max(0, Math.ceil(-Math.log10(step / unit) - 1e-9));
  const text = (ns / unit).toFixed(decimals);
  const dot = text.indexOf(".");
  const whole = dot < 0 ? text : text.slice(0, dot);
  // toFixed gives exponent notation from 1e21 on: left as it is (no axis reaches it: 1e21 ns is 31,700 years).
  const grouped = /^-?\d+$/.test(whole) ? whole.replace(/\B(?=(\d{3})+$)/g, ",") : whole;
  return `${grouped}${dot < 0 ? "" : text.slice(dot)} ${name}`;
}
