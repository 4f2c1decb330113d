"""What Holistic Trace Analysis finds in Chrome JSON trace directories (driven by test/interop/hta.test.ts).

    .venv/bin/python test/interop/hta_check.py DIR [DIR...]

For each directory (one or more *.json traces, one per rank), loads it with ``TraceAnalysis``, runs the GPU kernel
breakdown with every kernel kept (no "others" bucket, memory kernels included) and prints one JSON object on
stdout:

    {"hta_version": "0.5.0",
     "traces": {DIR: {"ranks": {RANK: {"linked_gpu": N,
                                       "kernels": [{"name", "cat", "count", "sum_us"}...],
                                       "breakdown": [{"name", "kernel_type", "sum_us"}...]}},
                      "kernel_types": [{"kernel_type", "sum_us", "percentage"}...]}}}

"kernels" are the rows HTA treats as GPU kernels (its breakdown takes every event with a stream, i.e. stream != -1),
counted per (name, category) from HTA's own parsed trace; "linked_gpu" the GPU rows with a correlation that HTA
joined to their launch call (index_correlation > 0); "breakdown" is the per-kernel table of
``get_gpu_kernel_breakdown``. HTA's progress messages go to stderr so stdout stays one JSON document.
"""

import contextlib
import json
import sys
from importlib.metadata import version


def analyse(trace_dir: str) -> dict:
    from hta.trace_analysis import TraceAnalysis

    analysis = TraceAnalysis(trace_dir=trace_dir)
    kernel_types, per_kernel = analysis.get_gpu_kernel_breakdown(
        visualize=False, duration_ratio=1.0, num_kernels=2**31 - 1, include_memory_kernels=True
    )
    sym = analysis.t.symbol_table.get_sym_table()
    ranks = {}
    for rank, df in analysis.t.traces.items():
        gpu = df[df["stream"].ne(-1)]
        counts: dict = {}
        for name_id, cat_id, dur in zip(gpu["name"], gpu["cat"], gpu["dur"]):
            key = (sym[name_id], sym[cat_id])
            n, total = counts.get(key, (0, 0.0))
            counts[key] = (n + 1, total + float(dur))
        rows = per_kernel[per_kernel["rank"] == int(rank)]
        # GPU rows HTA joined to their launch (index_correlation > 0; 0 is "the linked event is not in the trace").
        linked = 0
        if "index_correlation" in df.columns and "correlation" in df.columns:
            linked = int(((df["stream"] >= 0) & (df["correlation"] > 0) & (df["index_correlation"] > 0)).sum())
        ranks[str(rank)] = {
            "linked_gpu": linked,
            "kernels": [
                {"name": name, "cat": cat, "count": n, "sum_us": total}
                for (name, cat), (n, total) in sorted(counts.items())
            ],
            "breakdown": [
                {"name": str(r["name"]), "kernel_type": str(r["kernel_type"]), "sum_us": float(r["sum (us)"])}
                for _, r in rows.iterrows()
            ],
        }
    return {
        "ranks": ranks,
        "kernel_types": [
            {"kernel_type": str(r["kernel_type"]), "sum_us": float(r["sum"]), "percentage": float(r["percentage"])}
            for _, r in kernel_types.iterrows()
        ],
    }


def main(dirs: list) -> int:
    if not dirs:
        print(__doc__, file=sys.stderr)
        return 2
    out = {"hta_version": version("HolisticTraceAnalysis"), "traces": {}}
    with contextlib.redirect_stdout(sys.stderr):
        for d in dirs:
            out["traces"][d] = analyse(d)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
