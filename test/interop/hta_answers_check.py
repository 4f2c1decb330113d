"""HTA's launch, queue-length and memory-bandwidth answers for a Chrome JSON trace directory (driven by
test/interop/hta_answers.test.ts, which computes the same answers from the raw records).

    .venv/bin/python test/interop/hta_answers_check.py TRACE_DIR

Loads the directory with ``TraceAnalysis(trace_dir=...)`` (HTA's defaults, as a user would: with two ProfilerSteps
or more, GPU work launched after the last step starts is dropped) and prints one JSON document on stdout:

    {"hta_version": "0.5.0",
     "min_ts": HTA's time origin (µs on the trace's own scale: every ``ts`` below has it added back),
     "launch": [[correlation, cpu_duration, gpu_duration, launch_delay]...],
         get_cuda_kernel_launch_stats(ranks=[0], include_memory_events=True), rows in HTA's order
     "queue": [[ts, stream, queue_length]...],                  get_queue_length_time_series()[0], HTA's order
     "queue_summary": [{"stream", "count", "mean", "std", "min", "25%", "50%", "75%", "max"}...],
                                                                get_queue_length_summary()
     "membw": [[ts, name, memory_bw_gbps]...],                  get_memory_bw_time_series()[0], HTA's order
     "membw_summary": [{"name", "count", "mean", "std", "min", "25%", "50%", "75%", "max"}...]}
                                                                get_memory_bw_summary()

Times are HTA's µs (its parser rounds ns-resolution starts up and ends down); NaN (a one-row std) is written as
null. HTA's progress messages go to stderr so stdout stays one JSON document.
"""

import contextlib
import json
import math
import sys
from importlib.metadata import version

STATS = ["count", "mean", "std", "min", "25%", "50%", "75%", "max"]


def num(x):
    x = float(x)
    return None if math.isnan(x) else x


def summary(df, key: str, col: str) -> list:
    if df is None:
        return []
    out = []
    for idx, row in df.iterrows():
        # index: (rank, key); columns: (col, stat)
        out.append({key: idx[1] if isinstance(idx[1], str) else int(idx[1]), **{s: num(row[(col, s)]) for s in STATS}})
    return out


def analyse(trace_dir: str) -> dict:
    from hta.trace_analysis import TraceAnalysis

    a = TraceAnalysis(trace_dir=trace_dir)
    base = int(a.t.min_ts)
    launch = a.get_cuda_kernel_launch_stats(ranks=[0], visualize=False)[0]
    queue = a.get_queue_length_time_series(ranks=[0]).get(0)
    queue_summary = a.get_queue_length_summary(ranks=[0])
    membw = a.get_memory_bw_time_series(ranks=[0]).get(0)
    membw_summary = a.get_memory_bw_summary(ranks=[0])
    return {
        "hta_version": version("HolisticTraceAnalysis"),
        "min_ts": base,
        "launch": [
            [int(c), int(cd), int(gd), int(ld)]
            for c, cd, gd, ld in zip(launch["correlation"], launch["cpu_duration"], launch["gpu_duration"], launch["launch_delay"])
        ],
        "queue": [] if queue is None else [
            [int(t) + base, int(s), int(q)] for t, s, q in zip(queue["ts"], queue["stream"], queue["queue_length"])
        ],
        "queue_summary": summary(queue_summary, "stream", "queue_length"),
        "membw": [] if membw is None else [
            [int(t) + base, str(n), float(b)] for t, n, b in zip(membw["ts"], membw["name"], membw["memory_bw_gbps"])
        ],
        "membw_summary": summary(membw_summary, "name", "memory_bw_gbps"),
    }


def main(args: list) -> int:
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with contextlib.redirect_stdout(sys.stderr):
        out = analyse(args[0])
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
