"""HTA's kernel launch answer for a Chrome JSON trace directory (driven by
test/interop/hta_answers.test.ts, which computes the same answer from the raw records).

    .venv/bin/python test/interop/hta_answers_check.py TRACE_DIR

Loads the directory with ``TraceAnalysis(trace_dir=...)`` (HTA's defaults, as a user would: with two ProfilerSteps
or more, GPU work launched after the last step starts is dropped) and prints one JSON document on stdout:

    {"hta_version": "0.5.0",
     "min_ts": HTA's time origin (µs on the trace's own scale),
     "launch": [[correlation, cpu_duration, gpu_duration, launch_delay]...]}
         get_cuda_kernel_launch_stats(ranks=[0], include_memory_events=True), rows in HTA's order

Times are HTA's µs (its parser rounds ns-resolution starts up and ends down). HTA's progress messages go to stderr
so stdout stays one JSON document.
"""

import contextlib
import json
import sys
from importlib.metadata import version


def analyse(trace_dir: str) -> dict:
    from hta.trace_analysis import TraceAnalysis

    a = TraceAnalysis(trace_dir=trace_dir)
    base = int(a.t.min_ts)
    launch = a.get_cuda_kernel_launch_stats(ranks=[0], visualize=False)[0]
    return {
        "hta_version": version("HolisticTraceAnalysis"),
        "min_ts": base,
        "launch": [
            [int(c), int(cd), int(gd), int(ld)]
            for c, cd, gd, ld in zip(launch["correlation"], launch["cpu_duration"], launch["gpu_duration"], launch["launch_delay"])
        ],
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
