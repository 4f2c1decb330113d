/**
 * Colors of the timeline canvas, light and dark; the dark palette follows the system setting
 * (`prefers-color-scheme: dark`), as the page's stylesheet does.
 */
import { Kind } from "../src/core/timeline.js";
import type { LoadedFile } from "./model.js";

/** Canvas colors of one theme (CSS color strings). */
export interface Palette {
  bg: string;
  altRow: string;
  gutter: string;
  header: string;
  headerText: string;
  label: string;
  line: string;
  axisText: string;
  strong: string;
  accent: string;
  flow: string;
  /** Range selection band (translucent) and its edges. */
  range: string;
  rangeRows: string;
  rangeEdge: string;
  measure: string;
  mark: string;
  selected: string;
}

export const LIGHT: Palette = {
  bg: "#ffffff", altRow: "#f7f8fa", gutter: "#fafafa", header: "#e8eaed", headerText: "#202124", label: "#3c4043",
  line: "#dadce0", axisText: "#5f6368", strong: "#202124", accent: "#1a73e8", flow: "#5f6368",
  range: "rgba(26, 115, 232, 0.07)", rangeRows: "rgba(26, 115, 232, 0.16)", rangeEdge: "#1a73e8",
  measure: "#c5221f", mark: "#e37400", selected: "#000000",
};

export const DARK: Palette = {
  bg: "#1e1f22", altRow: "#25272b", gutter: "#202124", header: "#303134", headerText: "#e8eaed", label: "#bdc1c6",
  line: "#3c4043", axisText: "#9aa0a6", strong: "#e8eaed", accent: "#8ab4f8", flow: "#9aa0a6",
  range: "rgba(138, 180, 248, 0.10)", rangeRows: "rgba(138, 180, 248, 0.22)", rangeEdge: "#8ab4f8",
  measure: "#f28b82", mark: "#fdd663", selected: "#ffffff",
};

const dark = typeof matchMedia === "function" ? matchMedia("(prefers-color-scheme: dark)") : null;

/** The palette for the system's current setting. */
export function palette(): Palette {
  return dark?.matches ? DARK : LIGHT;
}

/** Calls `f` when the system switches between light and dark. */
export function onThemeChange(f: () => void): void {
  dark?.addEventListener("change", f);
}

const KERNEL_COLORS = [
  "#4e79a7", "#59a14f", "#76b7b2", "#3b8bc2", "#6a9f58", "#8c6bb1", "#2f7f7a", "#5778a4", "#7aa974", "#6f63a8",
  "#3f9aa8", "#52869e",
];
const RANGE_COLORS = ["#b07aa1", "#9c755f", "#bab0ac", "#d4a6c8", "#a39171", "#c49c94"];

/** Fill color of event i (by kind; kernels and ranges by name, NVTX ranges by their own color when set). */
export function kindColor(f: LoadedFile, i: number): string {
  const ev = f.events;
  const k = ev.kind(i);
  switch (k) {
    case Kind.KERNEL:
      return KERNEL_COLORS[ev.name(i) % KERNEL_COLORS.length];
    case Kind.MEMCPY: {
      const ck = ev.word(i, 11) & 0xff;
      return ck === 1 ? "#e8710a" : ck === 2 ? "#d93025" : ck === 8 ? "#b06000" : "#f28e2b";
    }
    case Kind.MEMSET:
      return "#edc948";
    case Kind.API_RUNTIME:
      return "#8d9db6";
    case Kind.API_DRIVER:
      return "#a7adb4";
    case Kind.SYNC:
      return "#e15759";
    case Kind.RANGE:
    case Kind.INSTANT: {
      const c = ev.word(i, 9);
      if (c !== 0) return `#${(c & 0xffffff).toString(16).padStart(6, "0")}`;
      return RANGE_COLORS[ev.name(i) % RANGE_COLORS.length];
    }
    case Kind.GPU_RANGE:
      return "#c9b3d9";
    case Kind.GRAPH:
      return "#17becf";
    case Kind.COUNTER:
      return "#4e79a7";
    default:
      return "#9e9e9e";
  }
}

/** Dark or light text on a slice color. */
export function textColor(bg: string): string {
  const v = parseInt(bg.slice(1), 16);
  const l = 0.299 * (v >> 16) + 0.587 * ((v >> 8) & 255) + 0.114 * (v & 255);
  return l > 150 ? "#1b1b1b" : "#ffffff";
}
