"""What HTA and XProf answer about a trace, for the answers tests (test/interop/answers_*.test.ts, which compute the
same answers from the records they wrote).

    .venv/bin/python test/interop/answers_check.py hta TRACE_DIR
    .venv-xprof/bin/python test/interop/answers_check.py xprof FILE.xplane.pb

Prints one JSON document on stdout (the clients' progress messages go to stderr):

hta:   {"kernels": [{"name", "kernel_type", "sum_us", "max_us", "min_us", "mean_us"}],   get_gpu_kernel_breakdown,
                                                                                         every kernel and memory op
        "temporal": {"idle_us", "compute_us", "non_compute_us", "kernel_us"},            get_temporal_breakdown
        "idle": [{"stream", "category", "idle_us"}],                                     get_idle_time_breakdown
        "overlap_pct": float,                                                            get_comm_comp_overlap
        "iterations": [...]}                                     the step numbers HTA gave events (-1 left out)
        HTA loads with include_last_profiler_step=True (every step's GPU work kept).
xprof: {"kernels": [{"name", "regs", "block", "grid", "occurrences", "total_us", "avg_us", "min_us", "max_us"}],
                                                                                          kernel_stats rows
        "steps": [{"step", "step_ms", "parts": {column: ms}}],                            overview_page steps
        "device_core_count": str, "device_type": str}                                    overview run environment
"""

import contextlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def hta(trace_dir: str) -> dict:
    from hta.trace_analysis import TraceAnalysis

    import fidelity_check

    # The temporal breakdown, idle time and steps as fidelity_check.py reads them; here also each kernel's min, max
    # and mean, and the communication / computation overlap.
    base = fidelity_check.hta(trace_dir)
    a = TraceAnalysis(trace_dir=trace_dir, include_last_profiler_step=True)
    _, per_kernel = a.get_gpu_kernel_breakdown(
        visualize=False, duration_ratio=1.0, num_kernels=2**31 - 1, include_memory_kernels=True
    )
    return {
        "kernels": [
            {"name": str(r["name"]), "kernel_type": str(r["kernel_type"]), "sum_us": float(r["sum (us)"]),
             "max_us": float(r["max (us)"]), "min_us": float(r["min (us)"]), "mean_us": float(r["mean (us)"])}
            for _, r in per_kernel.iterrows()
        ],
        "temporal": base["temporal"],
        "idle": base["idle"],
        "overlap_pct": float(a.get_comm_comp_overlap(visualize=False)["comp_comm_overlap_pctg"].iloc[0]),
        "iterations": base["iterations"],
    }


def xprof(path: str) -> dict:
    from xprof.convert import raw_to_tool_data as rtd

    def run(tool):
        data, _ = rtd.xspace_to_tool_data([path], tool, {"use_saved_result": False})
        return json.loads(data if isinstance(data, str) else data.decode("utf-8"))

    ks = run("kernel_stats")
    ks = ks[0] if isinstance(ks, list) else ks
    ids = [c["id"] for c in ks["cols"]]
    kernels = []
    for row in ks["rows"]:
        v = dict(zip(ids, [c.get("v") for c in row["c"]]))
        kernels.append({
            "name": v["kernel_name"], "regs": int(v["registers_per_thread"]), "block": v["block_dim"], "grid": v["grid_dim"],
            "occurrences": int(v["occurrences"]), "total_us": float(v["total_duration_us"]), "avg_us": float(v["avg_duration_us"]),
            "min_us": float(v["min_duration_us"]), "max_us": float(v["max_duration_us"]),
        })
    steps, env = [], {}
    for table in run("overview_page"):
        cols = [c["id"] for c in table.get("cols", [])]
        if "device_core_count" in (table.get("p") or {}):
            env = {"device_core_count": table["p"]["device_core_count"], "device_type": table["p"]["device_type"]}
        if "stepnum" not in cols or "stepTimeMs" not in cols:
            continue
        for row in table["rows"]:
            v = dict(zip(cols, [c.get("v") for c in row["c"]]))
            steps.append({"step": v["stepnum"], "step_ms": float(v["stepTimeMs"]),
                          "parts": {c: float(v[c]) for c in cols if c.endswith("TimeMs") and c != "stepTimeMs"}})
    return {"kernels": kernels, "steps": steps, **env}


def main(argv: list) -> int:
    if len(argv) != 2 or argv[0] not in ("hta", "xprof"):
        print(__doc__, file=sys.stderr)
        return 2
    with contextlib.redirect_stdout(sys.stderr):
        out = {"hta": hta, "xprof": xprof}[argv[0]](argv[1])
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
