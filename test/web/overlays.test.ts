/**
 * web/overlays.ts text fitting in Node: fitWidth cuts a label to the width its font measures (the group headers are
 * bold, wider than fitText's estimate for the regular font, and must end before the header's buttons).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fitHeader, fitText, fitWidth, sliceLabel, CHAR_W } from "../../web/overlays.js";
import { leafName, shortName } from "../../web/model.js";

test("fitWidth: the longest prefix with an ellipsis that the measure fits; the whole label when it fits", () => {
  const bold = (t: string) => t.length * 7; // wider than fitText's 6.1 px per character
  const label = "▾ CPU · pid 31337 · python train_mlp.py --steps 100";
  const px = 250 - 44 - 10;
  const shown = fitWidth(label, px, bold);
  assert.ok(bold(shown) <= px, `${bold(shown)} px`);
  assert.ok(shown.endsWith("…") && label.startsWith(shown.slice(0, -1)));
  assert.ok(bold(`${label.slice(0, shown.length)}…`) > px, "one character more would not fit");
  assert.ok(bold(fitText(label, px)) > px, "the regular-font estimate overflows in bold");
  assert.is(fitWidth("GPU 0", px, bold), "GPU 0");
  assert.is(fitWidth("GPU 0", 3, bold), "");
});

test("fitHeader: a long file name gives way first (extension, then middle), so each group's CPU / GPU words stay", () => {
  const bold = (t: string) => t.length * 6.5; // the viewer's bold 11 px system-ui measures 6–7 px a character
  const px = 250 - 44 - 10; // 30 characters
  const tag = "rawtrace-gpu-node-17-rank3-41522.rawtrace";
  const gpu = `▾ (aligned) ${tag} · GPU 0 · NVIDIA H100 80GB HBM3`;
  const cpu = `▾ (aligned) ${tag} · CPU · pid 41522 · python train.py`;
  const g = fitHeader(gpu, tag, px, bold);
  const c = fitHeader(cpu, tag, px, bold);
  assert.ok(bold(g) <= px && bold(c) <= px, `${g} | ${c}`);
  assert.ok(g.includes(" · GPU 0") && c.includes(" · CPU"), `${g} | ${c}`);
  assert.is(g, "▾ (aligned) rawt…1522 · GPU 0…");
  // Before: both cut inside the name, the same text for every group of the file.
  assert.is(fitWidth(gpu, px, bold), fitWidth(cpu, px, bold));
  // The extension alone goes when that is enough; a copy's number stays.
  const wide = (t: string) => t.length * 5; // 39 characters
  assert.is(fitHeader("▾ trace.rawtrace.gz (2) · GPU 0 · NVIDIA A100", "trace.rawtrace.gz (2)", 39 * 5, wide), "▾ trace (2) · GPU 0 · NVIDIA A100");
  // A short name is kept whole once its extension is gone, the group's words cut at the end.
  const sample = fitHeader("▾ cuda_sample.rawtrace.gz · CPU · pid 465 · cuda_sample", "cuda_sample.rawtrace.gz", px, bold);
  assert.ok(sample.startsWith("▾ cuda_sample · CPU · pid 4") && sample.endsWith("…") && bold(sample) <= px, sample);
  // The name keeps at least 8 characters (its start and its end): the rest is cut at the end, as before.
  const tight = fitHeader(gpu, tag, 22 * 6.5, bold);
  assert.is(tight, "▾ (aligned) rawt…1522…");
  // A name that is also part of "(aligned) " (an extension-less file named "gned"): the name after it is the one
  // shortened, the prefix kept (before: "▾ (align…d) gn…", the prefix garbled).
  const gned = fitHeader("▾ (aligned) gned · GPU 0 · NVIDIA H100", "gned", 100, bold);
  assert.ok(gned.startsWith("▾ (aligned) ") && bold(gned) <= 100, gned);
  // One file open (no tag), or a label that fits: unchanged behaviour.
  assert.is(fitHeader(gpu, undefined, px, bold), fitWidth(gpu, px, bold));
  assert.is(fitHeader("▾ a.rawtrace · GPU 0", "a.rawtrace", px, bold), "▾ a.rawtrace · GPU 0");
});

test("slice labels: the short name when it fits, else its last :: part (the kernel itself), cut as fitText cuts", () => {
  const full = "void at::native::xpu::ReduceKernel<512, 1, at::native::xpu::ReduceOp<float> >(at::native::xpu::ReduceOp<float>)";
  const short = shortName(full);
  assert.is(short, "at::native::xpu::ReduceKernel");
  assert.is(leafName(short), "ReduceKernel");
  assert.is(leafName("gemm_kernel"), "gemm_kernel");
  assert.is(leafName("odd::"), "odd::"); // nothing after the last ::: the name itself
  const px = (n: number) => n * CHAR_W;
  assert.is(sliceLabel(short, leafName(short), px(40)), short); // fits: whole
  assert.is(sliceLabel(short, leafName(short), px(20)), "ReduceKernel"); // before: "at::native::xpu::Re…"
  assert.is(sliceLabel(short, leafName(short), px(8)), "ReduceK…");
  assert.is(sliceLabel("gemm_kernel", "gemm_kernel", px(8)), fitText("gemm_kernel", px(8)));
});

test.run();
