// SPDX-License-Identifier: MIT
/**
 * The XSpace metadata lists with a fixed resident budget (assembly/emit/xspace_meta_store.ts: entries by id and the
 * name index in paged arrays, buckets split by extendible hashing, an overflow table past 20 hash bits) and the
 * bounded detail-tuple cache (assembly/emit/xspace_details.ts). With a two-page budget (the test-only
 * `pagedBudgetBytes`: entry and bucket pages spilled and read back) and with hashes cut to a few bits (the test-only
 * `rt_set_name_hash_mask`: distinct detail strings share hashes, so every lookup compares the strings themselves and
 * the buckets split to the depth limit and overflow), the XSpace bytes are those of the default budget and full
 * hashes, for real traces and generated dumps with thousands of distinct memcpy sizes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Engine } from "../../src/core/engine.js";
import { createEngine } from "../../src/node/wasm.js";
import { fileSource } from "../../src/node/file_source.js";
import { fileSpill } from "../../src/node/spill.js";
import { generate } from "../../bench/generate.js";
import { fromBinary } from "@bufbuild/protobuf";
import { XSpaceSchema } from "../../src/gen/xplane_pb.js";

const dir = mkdtempSync(join(tmpdir(), "rawtrace-detail-test-"));
// 150,000 records: about 2,300 distinct memcpy_details strings (each memcpy draws its size from 10^7 values).
const many = join(dir, "many.rawtrace");
generate(150000, many);

const inputs = [
  "samples/h100_torch_train_nvtx.rawtrace",
  "samples/alexnet_a100_rank0.rawtrace",
  "test/fixtures/real/h100/torch.rawtrace",
  "test/fixtures/real/h100/torch_graph.rawtrace",
  many,
];

/** The core's test-only exports this file uses. */
interface StoreExports {
  rt_set_name_hash_mask(mask: bigint): void;
  rt_meta_store_stat(i: number): number;
}
/** Test-only exports of `engine`'s core (a private field of Engine). */
function core(engine: Engine): StoreExports {
  return (engine as unknown as { x: StoreExports }).x;
}

/** SHA-256 and bytes of the XSpace of `path`, with resident budget `budget` (0: default) and hash mask `mask`. */
async function xspace(engine: Engine, path: string, budget: number, mask: bigint): Promise<{ hash: string; bytes: Buffer }> {
  engine.pagedBudgetBytes = budget;
  core(engine).rt_set_name_hash_mask(mask);
  const parts: Uint8Array[] = [];
  const src = fileSource(path);
  try {
    await engine.convert(src, (b) => {
      parts.push(b.slice());
    }, { format: "xspace" });
  } finally {
    src.close();
    core(engine).rt_set_name_hash_mask(0n);
    engine.pagedBudgetBytes = 0;
  }
  const bytes = Buffer.concat(parts);
  return { hash: createHash("sha256").update(bytes).digest("hex"), bytes };
}

/** Counters of the last conversion: spilled entry pages, spilled bucket pages, overflowed names, bucket pages. */
function stats(engine: Engine): number[] {
  return [0, 1, 2, 3].map((i) => core(engine).rt_meta_store_stat(i));
}

test("a two-page budget spills entry and bucket pages and gives the bytes of the default budget", async () => {
  const engine = await createEngine();
  engine.spillFactory = () => fileSpill(dir);
  for (const path of inputs) {
    const ref = await xspace(engine, path, 0, 0n);
    const [entSpilled, bktSpilled] = stats(engine);
    // The default budget (8 MiB of each array) holds these traces' metadata whole.
    assert.is(entSpilled + bktSpilled, 0, path);
    const small = await xspace(engine, path, 1, 0n);
    assert.is(small.hash, ref.hash, path);
    if (path === many) {
      const s = stats(engine);
      assert.ok(s[0] > 0 && s[1] > 0, `${path}: spilled pages ${s}`);
      assert.ok(s[3] > 4, `${path}: buckets ${s[3]}`);
    }
  }
});

test("colliding hashes: names compared exactly, buckets split to the depth limit, then the overflow table", async () => {
  const engine = await createEngine();
  engine.spillFactory = () => fileSpill(dir);
  // Hash bits kept: 4 low bits of the tag (every name in one directory slot, 16 tags for thousands of names); the
  // top 12 bits (buckets split, tags shared within each); none but one bit.
  const masks = [0xfn << 32n, 0xfffn << 52n, 1n << 40n];
  for (const path of [many, "samples/h100_torch_train_nvtx.rawtrace"]) {
    const ref = await xspace(engine, path, 0, 0n);
    for (const mask of masks) {
      for (const budget of [0, 1]) {
        const got = await xspace(engine, path, budget, mask);
        assert.is(got.hash, ref.hash, `${path} mask ${mask.toString(16)} budget ${budget}`);
        if (path === many && mask === masks[0]) assert.ok(stats(engine)[2] > 1000, `overflowed ${stats(engine)}`);
      }
    }
  }
});

test("stat metadata names are unique per plane and every detail ref names one", async () => {
  const engine = await createEngine();
  engine.spillFactory = () => fileSpill(dir);
  const space = fromBinary(XSpaceSchema, (await xspace(engine, many, 1, 0xfn << 32n)).bytes);
  let details = 0;
  for (const plane of space.planes) {
    const names = new Map<string, bigint>();
    for (const [id, m] of Object.entries(plane.statMetadata)) {
      assert.is(BigInt(id), m.id);
      assert.not.ok(names.has(m.name), `${plane.name}: ${m.name} twice`);
      names.set(m.name, m.id);
    }
    const memcpy = names.get("memcpy_details");
    for (const line of plane.lines) {
      for (const ev of line.events) {
        for (const st of ev.stats) {
          if (memcpy === undefined || st.metadataId !== memcpy) continue;
          assert.is(st.value.case, "refValue");
          const ref = plane.statMetadata[String(st.value.value)];
          assert.ok(ref !== undefined && ref.name.startsWith("kind_src:"), `ref ${st.value.value}`);
          details++;
        }
      }
    }
  }
  assert.ok(details > 2000, `memcpy events ${details}`);
});

test("a host merge's planes (well-known stats interned as each plane is made) keep their metadata apart", async () => {
  const { dlrmRanks } = await import("../helpers/dlrm.js");
  const { merge } = await import("../../src/node/merge.js");
  const ranks = dlrmRanks();
  const paths = ranks.map((r) => {
    const p = join(dir, `rank${r.rank}.rawtrace`);
    writeFileSync(p, r.bytes);
    return p;
  });
  const m = await merge(paths, join(dir, "logdir"), { format: "xspace", jobs: 1 });
  const space = fromBinary(XSpaceSchema, readFileSync(m.outputs[0]));
  let planes = 0;
  for (const plane of space.planes) {
    const names = new Set<string>();
    for (const md of Object.values(plane.statMetadata)) {
      assert.not.ok(names.has(md.name), `${plane.name}: ${md.name} twice`);
      names.add(md.name);
    }
    if (plane.name.startsWith("/device:GPU:")) {
      planes++;
      assert.ok(names.has("kernel_details"), plane.name);
    }
  }
  assert.is(planes, ranks.length);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));

test.run();
