/**
 * web/search.ts nameTest in Node: a query as a case-insensitive substring, or as a regular expression that takes
 * the escapes people type (`\_`, `\-`: the character itself), and names a bad one.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { nameTest } from "../../web/search.js";

test("regex: ordinary escapes of punctuation are accepted (bn_bw\\_1C11), case-insensitive", () => {
  const t = nameTest("bn_bw\\_1C11", true);
  assert.ok(t("cudnn::bn_bw_1C11_kernel"));
  assert.ok(t("BN_BW_1c11"));
  assert.not.ok(t("bn_bw1C11"));
  assert.ok(nameTest("^elementwise\\-\\w+$", true)("Elementwise-add"));
  assert.ok(nameTest("ProfilerStep#\\d+", true)("ProfilerStep#12"));
});

test("regex: a bad expression throws a SyntaxError naming it; a substring query never does", () => {
  assert.throws(() => nameTest("gemm(", true), (e: Error) => e instanceof SyntaxError);
  assert.ok(nameTest("gemm(", false)("volta_gemm(x)"));
  assert.ok(nameTest("GEMM", false)("volta_sgemm_128"));
});

test.run();
