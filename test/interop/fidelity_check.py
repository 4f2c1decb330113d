"""What HTA and XProf compute from rawtrace's output (driven by test/interop/fidelity.test.ts, which compares it
with figures computed independently from the raw records).

    .venv/bin/python test/interop/fidelity_check.py hta TRACE_DIR
    .venv/bin/python test/interop/fidelity_check.py hta-steps TRACE_DIR
    .venv-xprof/bin/python test/interop/fidelity_check.py xprof FILE.xplane.pb

Prints one JSON document on stdout (the clients' progress messages go to stderr):

hta:   {"kernels": [{"name", "kernel_type", "sum_us", "count"}],       get_gpu_kernel_breakdown, every kernel kept
        "kernel_types": [{"kernel_type", "sum_us"}],
        "temporal": {"idle_us", "compute_us", "non_compute_us", "kernel_us"},   get_temporal_breakdown
        "idle": [{"stream", "category", "idle_us"}],                       get_idle_time_breakdown
        "iterations": [..]}                                                 the step numbers HTA assigned to events
        HTA loads with include_last_profiler_step=True (every step's GPU work kept).
hta-steps: {"steps": [{"iteration", "rows", "kernel_us", "idle_us", "compute_us", "non_compute_us"}]}
        HTA's own temporal breakdown (BreakdownAnalysis.get_temporal_breakdown) run on the GPU rows of each
        iteration as HTA assigned them (its "iteration" column: a GPU row takes its launch call's, which is the
        ProfilerStep range containing the call's start).
xprof: {"steps": [{"step", "step_ms", "compute_ms", "parts_ms"}],       overview_page step-time graph
        "step_avg_ms", "kernels": [{"name", "occurrences", "total_us"}],   kernel_stats
        "rows": [{"process", "thread", "events", "durations_us"}]}         trace_viewer rows
"""

import contextlib
import json
import sys


def hta(trace_dir: str) -> dict:
    from hta.trace_analysis import TraceAnalysis

    a = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=True)
    kernel_types, per_kernel = a.get_gpu_kernel_breakdown(
        visualize=False, duration_ratio=1.0, num_kernels=2**31 - 1, include_memory_kernels=True
    )
    temporal = a.get_temporal_breakdown(visualize=False)
    idle, _ = a.get_idle_time_breakdown(visualize=False)
    rank = next(iter(a.t.traces))
    df = a.t.traces[rank]
    # NaN: rows HTA gives no iteration (its add_iteration skips GPU rows on stream 0, e.g. every ROCm row).
    iterations = sorted({int(i) for i in df["iteration"].unique() if i == i and int(i) >= 0}) if "iteration" in df else []
    return {
        "kernels": [
            {"name": str(r["name"]), "kernel_type": str(r["kernel_type"]), "sum_us": float(r["sum (us)"]),
             "count": int(r["count"]) if "count" in r else -1}
            for _, r in per_kernel.iterrows()
        ],
        "kernel_types": [
            {"kernel_type": str(r["kernel_type"]), "sum_us": float(r["sum"])} for _, r in kernel_types.iterrows()
        ],
        "temporal": {
            "idle_us": float(temporal["idle_time(us)"].iloc[0]),
            "compute_us": float(temporal["compute_time(us)"].iloc[0]),
            "non_compute_us": float(temporal["non_compute_time(us)"].iloc[0]),
            "kernel_us": float(temporal["kernel_time(us)"].iloc[0]),
        },
        "idle": [
            {"stream": int(r["stream"]), "category": str(r["idle_category"]), "idle_us": float(r["idle_time"])}
            for _, r in idle.iterrows()
        ],
        "iterations": iterations,
    }


def hta_steps(trace_dir: str) -> dict:
    import copy

    from hta.analyzers.breakdown_analysis import BreakdownAnalysis
    from hta.trace_analysis import TraceAnalysis

    a = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=True)
    rank = next(iter(a.t.traces))
    df = a.t.traces[rank]
    steps = []
    for it in sorted({int(i) for i in df["iteration"].unique() if i == i and int(i) >= 0}):
        gpu = df[df["stream"].ne(-1) & df["iteration"].eq(it)]
        if len(gpu) == 0:
            continue
        t = copy.copy(a.t)
        t.traces = {rank: gpu}
        r = BreakdownAnalysis.get_temporal_breakdown(t, visualize=False)
        steps.append({
            "iteration": it, "rows": int(len(gpu)),
            "kernel_us": float(r["kernel_time(us)"].iloc[0]), "idle_us": float(r["idle_time(us)"].iloc[0]),
            "compute_us": float(r["compute_time(us)"].iloc[0]), "non_compute_us": float(r["non_compute_time(us)"].iloc[0]),
        })
    return {"steps": steps}


def xprof(path: str) -> dict:
    from xprof.convert import raw_to_tool_data as rtd

    def run(tool):
        data, _ = rtd.xspace_to_tool_data([path], tool, {"use_saved_result": False})
        return json.loads(data if isinstance(data, str) else data.decode("utf-8"))

    steps = []
    avg = None
    for table in run("overview_page"):
        ids = [c["id"] for c in table.get("cols", [])]
        if "stepnum" not in ids or "stepTimeMs" not in ids:
            continue
        avg = float(table["p"]["steptime_ms_average"])
        parts = [i for i in ids if i.endswith("TimeMs") and i != "stepTimeMs"]
        for row in table["rows"]:
            v = dict(zip(ids, [c.get("v") for c in row["c"]]))
            steps.append({
                "step": v["stepnum"], "step_ms": float(v["stepTimeMs"]),
                "compute_ms": float(v["deviceComputeTimeMs"]), "parts_ms": sum(float(v[p]) for p in parts),
                "parts": {p: float(v[p]) for p in parts},
            })
    kernels = []
    ks = run("kernel_stats")
    ks = ks[0] if isinstance(ks, list) else ks
    ids = [c["id"] for c in ks["cols"]]
    for row in ks["rows"]:
        v = dict(zip(ids, [c.get("v") for c in row["c"]]))
        kernels.append({"name": v["kernel_name"], "occurrences": int(v["occurrences"]), "total_us": float(v["total_duration_us"])})
    tv = run("trace_viewer")
    proc, thread, rows = {}, {}, {}
    for e in tv["traceEvents"]:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            proc[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            thread[(e["pid"], e["tid"])] = e["args"]["name"]
    for e in tv["traceEvents"]:
        if e.get("ph") != "X":
            continue
        r = rows.setdefault((e["pid"], e["tid"]), {"events": 0, "durations_us": [], "names": []})
        r["events"] += 1
        r["durations_us"].append(float(e.get("dur", 0)))
        r["names"].append(e.get("name"))
    return {
        "steps": steps,
        "step_avg_ms": avg,
        "kernels": kernels,
        "rows": [
            {"process": proc.get(p), "thread": thread.get((p, t), str(t)), **r} for (p, t), r in sorted(rows.items())
        ],
    }


def main(argv: list) -> int:
    if len(argv) != 2 or argv[0] not in ("hta", "hta-steps", "xprof"):
        print(__doc__, file=sys.stderr)
        return 2
    with contextlib.redirect_stdout(sys.stderr):
        out = {"hta": hta, "hta-steps": hta_steps, "xprof": xprof}[argv[0]](argv[1])
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
