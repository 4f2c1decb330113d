/**
 * web/overlays.ts text fitting in Node: fitWidth cuts a label to the width its font measures (the group headers are
 * bold, wider than fitText's estimate for the regular font, and must end before the header's buttons).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { fitText, fitWidth } from "../../web/overlays.js";

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

test.run();
