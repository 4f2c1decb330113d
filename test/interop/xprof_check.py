# SPDX-License-Identifier: MIT
"""Opens one rawtrace XSpace with XProf's own converters and checks what XProf shows against expectations.

    python xprof_check.py <logdir/plugins/profile/<run>/<host>.xplane.pb> <expect.json>

expect.json (written by test/interop/xprof.test.ts):
  {"device_events": [{"plane", "row_prefix", "name", "ts_ns", "dur_ns", "correlation",
                      "kernel": {"regs", "shmem", "grid", "block"} | null}],
   "launches": [{"name", "tid", "ts_ns", "dur_ns", "correlation", "plane"}],
   "rows": {plane: [row name, ...]}   (optional: each line its own trace-viewer row of that plane),
   "stats_only": [device events as above]   (optional: counted in kernel_stats only, not looked up in trace_viewer),
   "counters": [{"plane", "name", "samples": [[ts_ns, value], ...]}]   (optional: trace_viewer@ counter tracks)}
Times are ns after the profile start. Runs xspace_to_tool_data for trace_viewer (legacy JSON: rows, times, flow
stats), trace_viewer@ (streaming JSON: launch -> kernel flow arrows), kernel_stats, overview_page and tool_names.
Prints one JSON line {"ok", "failures", "summary"} on stdout (summary.kernel_stats: every row as [name, grid, block,
regs, shmem, occurrences, total ns], sorted); exits 0 even when checks fail (the caller asserts).
"""
import json
import sys
import traceback
from collections import defaultdict

from xprof.convert import raw_to_tool_data as rtd


def as_text(data):
    if data is None:
        return None
    return data if isinstance(data, str) else data.decode("utf-8")


def main():
    path, expect_path = sys.argv[1], sys.argv[2]
    with open(expect_path) as f:
        expect = json.load(f)
    failures = []
    summary = {}

    def fail(msg):
        if len(failures) < 50:
            failures.append(msg)

    def run(tool, params=None):
        p = {"use_saved_result": False}
        p.update(params or {})
        data, content_type = rtd.xspace_to_tool_data([path], tool, p)
        if data is None:
            fail(f"{tool}: no data")
        return as_text(data)

    # ---- tool_names ----
    names = rtd.xspace_to_tool_names([path])
    summary["tool_names"] = names
    for t in ("kernel_stats", "overview_page"):
        if t not in names:
            fail(f"tool_names lacks {t}: {names}")
    if not any(n.startswith("trace_viewer") for n in names):
        fail(f"tool_names lacks a trace viewer: {names}")

    # ---- legacy trace_viewer ----
    tv = json.loads(run("trace_viewer"))
    events = tv["traceEvents"]
    proc = {}
    thread = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            proc[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            thread[(e["pid"], e["tid"])] = e["args"]["name"]
    by_corr = defaultdict(list)
    for e in events:
        if e.get("ph") == "X":
            c = e.get("args", {}).get("correlation_id")
            if c is not None:
                by_corr[int(c)].append(e)
    summary["trace_viewer_events"] = sum(1 for e in events if e.get("ph") == "X")
    summary["processes"] = sorted(set(proc.values()))

    # Every row of ours on its own trace-viewer row: two lines that shared a display id would show as one row
    # under one of their names. expect["rows"]: {plane: [display name of each line with events]}.
    rows_checked = 0
    for plane, names in expect.get("rows", {}).items():
        pids = [p for p, n in proc.items() if n == plane]
        if len(pids) != 1:
            fail(f"trace_viewer: {len(pids)} processes named {plane}")
            continue
        shown = [n for (p, _), n in thread.items() if p == pids[0]]
        for n in sorted(set(names)):
            if shown.count(n) != names.count(n):
                fail(f"trace_viewer: {names.count(n)} rows {n!r} of {plane} shown as {shown.count(n)} (rows: {sorted(shown)})")
        rows_checked += len(names)
    summary["rows_checked"] = rows_checked

    def close(us, ns):
        return abs(us * 1000.0 - ns) <= max(0.51, abs(ns) * 1e-12)

    def find(corr, name, plane):
        for e in by_corr.get(corr, []):
            if e.get("name") == name and proc.get(e["pid"]) == plane:
                return e
        return None

    flows_checked = 0
    for d in expect["device_events"]:
        e = find(d["correlation"], d["name"], d["plane"])
        if e is None:
            fail(f"trace_viewer: {d['name']!r} (correlation {d['correlation']}) not on {d['plane']}")
            continue
        row = thread.get((e["pid"], e["tid"]), "")
        if not row.startswith(d["row_prefix"]):
            fail(f"trace_viewer: {d['name']!r} on row {row!r}, expected {d['row_prefix']}...")
        if not close(e["ts"], d["ts_ns"]):
            fail(f"trace_viewer: {d['name']!r} ts {e['ts']} us, expected {d['ts_ns']} ns")
        if not close(e.get("dur", 0), d["dur_ns"]) and not (d["dur_ns"] == 0 and e.get("dur", 0) <= 1e-6):
            fail(f"trace_viewer: {d['name']!r} dur {e.get('dur')} us, expected {d['dur_ns']} ns")
    for l in expect["launches"]:
        h = find(l["correlation"], l["name"], "/host:CPU")
        if h is None:
            fail(f"trace_viewer: launch {l['name']!r} (correlation {l['correlation']}) not on /host:CPU")
            continue
        if h["tid"] != l["tid"]:
            fail(f"trace_viewer: launch {l['name']!r} on tid {h['tid']}, expected {l['tid']}")
        if not close(h["ts"], l["ts_ns"]) or not close(h.get("dur", 0), l["dur_ns"]):
            fail(f"trace_viewer: launch {l['name']!r} at {h['ts']}+{h.get('dur')} us, expected {l['ts_ns']}+{l['dur_ns']} ns")
        if h["args"].get("device_id") != str(l["device"]):
            fail(f"trace_viewer: launch {l['name']!r} device_id {h['args'].get('device_id')}, expected {l['device']}")
        # The flow stat XProf derives from correlation_id: same flow id, out on the host, in on the device.
        devs = [e for e in by_corr.get(l["correlation"], []) if proc.get(e["pid"]) == l["plane"]]
        hf = h["args"].get("flow")
        if hf is None or not devs:
            fail(f"trace_viewer: launch {l['name']!r} (correlation {l['correlation']}) has no flow to {l['plane']}")
            continue
        hf = int(hf)
        ok = False
        for d in devs:
            df = d["args"].get("flow")
            if df is not None and (int(df) >> 2) == (hf >> 2) and (hf & 3) == 2 and (int(df) & 3) == 1:
                ok = True
        if not ok:
            fail(f"trace_viewer: flow of launch correlation {l['correlation']} does not match its device event")
        flows_checked += 1
    summary["flow_stats_checked"] = flows_checked

    # ---- streaming trace_viewer@: flow arrows (bind_id, flow_out on the launch, flow_in on the kernel) ----
    tv2 = json.loads(run("trace_viewer@", {"trace_viewer_options": {"resolution": 0}}))
    ev2 = tv2["traceEvents"]
    proc2 = {e["pid"]: e["args"]["name"] for e in ev2 if e.get("ph") == "M" and e.get("name") == "process_name"}
    outs = defaultdict(list)
    ins = defaultdict(list)
    for e in ev2:
        if e.get("ph") != "X" or "bind_id" not in e:
            continue
        (outs if e.get("flow_out") else ins)[e["bind_id"]].append(e)
    arrows = 0
    for l in expect["launches"]:
        src = [e for b in outs for e in outs[b] if e["name"] == l["name"] and close(e["ts"], l["ts_ns"])
               and proc2.get(e["pid"], "").endswith("/host:CPU")]
        if not src:
            fail(f"trace_viewer@: launch {l['name']!r} at {l['ts_ns']} ns has no outgoing flow")
            continue
        targets = [d for d in expect["device_events"] if d["correlation"] == l["correlation"]]
        hit = False
        for s in src:
            for t in ins.get(s["bind_id"], []):
                for d in targets:
                    if t["name"] == d["name"] and close(t["ts"], d["ts_ns"]) and proc2.get(t["pid"], "").endswith(d["plane"]):
                        hit = True
        if hit:
            arrows += 1
        else:
            fail(f"trace_viewer@: no flow arrow from launch {l['name']!r} (correlation {l['correlation']}) to its device event")
    summary["flow_arrows"] = arrows

    # ---- counter tracks of trace_viewer@ (optional expect["counters"]: [{"plane", "name", "samples": [[ts_ns,
    # value], ...]}]): XProf draws a `_counters_` line's events as one "C" track per plane and name ----
    counters_checked = 0
    for c in expect.get("counters", []):
        tracks = [e for e in ev2 if e.get("ph") == "C" and e.get("name") == c["name"]
                  and proc2.get(e["pid"], "").endswith(c["plane"])]
        got = sorted((float(t), float(v)) for tr in tracks for t, v in tr.get("entries", []))
        want = sorted((ns, float(v)) for ns, v in c["samples"])
        if len(got) != len(want) or any(not close(g[0], w[0]) or abs(g[1] - w[1]) > abs(w[1]) * 1e-12
                                         for g, w in zip(got, want)):
            fail(f"trace_viewer@: counter {c['name']!r} on {c['plane']}: {got[:3]}... ({len(got)}), expected "
                 f"{[(w[0] / 1000.0, w[1]) for w in want[:3]]}... ({len(want)})")
        counters_checked += len(want)
    summary["counter_samples_checked"] = counters_checked

    # ---- kernel_stats ----
    ks = json.loads(run("kernel_stats"))
    cols = [c["id"] for c in ks["cols"]]
    rows = [{cols[i]: c.get("v") for i, c in enumerate(r["c"])} for r in ks["rows"]]
    summary["kernel_stats_rows"] = len(rows)
    summary["kernel_stats"] = sorted(
        [r["kernel_name"], r["grid_dim"], r["block_dim"], int(r["registers_per_thread"]), int(r["shmem_bytes"]),
         int(r["occurrences"]), round(r["total_duration_us"] * 1000.0)] for r in rows)
    want = defaultdict(lambda: {"n": 0, "dur": 0})
    for d in expect["device_events"] + expect.get("stats_only", []):
        k = d.get("kernel")
        if not k:
            continue
        key = (d["name"], k["regs"], k["shmem"], k["block"], k["grid"])
        want[key]["n"] += 1
        want[key]["dur"] += d["dur_ns"]
    for (name, regs, shmem, block, grid), w in want.items():
        match = [r for r in rows if r["kernel_name"] == name and r["block_dim"] == block and r["grid_dim"] == grid]
        if not match:
            fail(f"kernel_stats: no row for {name!r} block {block} grid {grid}")
            continue
        r = match[0]
        if int(r["registers_per_thread"]) != regs or int(r["shmem_bytes"]) != shmem:
            fail(f"kernel_stats: {name!r} regs {r['registers_per_thread']} shmem {r['shmem_bytes']}, expected {regs} {shmem}")
        if int(r["occurrences"]) != w["n"]:
            fail(f"kernel_stats: {name!r} occurrences {r['occurrences']}, expected {w['n']}")
        if abs(r["total_duration_us"] * 1000.0 - w["dur"]) > 1.0 + w["dur"] * 1e-9:
            fail(f"kernel_stats: {name!r} total {r['total_duration_us']} us, expected {w['dur']} ns")
    summary["kernel_stats_checked"] = len(want)

    # ---- overview_page ----
    ov = json.loads(run("overview_page"))
    summary["overview_sections"] = len(ov) if isinstance(ov, list) else 1

    print(json.dumps({"ok": not failures, "failures": failures, "summary": summary}))


if __name__ == "__main__":
    try:
        main()
    except Exception:  # noqa: BLE001 - reported to the caller as a failure
        print(json.dumps({"ok": False, "failures": ["exception: " + traceback.format_exc()], "summary": {}}))
