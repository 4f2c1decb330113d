"""Kineto's JSON writer against rawtrace's converter on the same program and the same machine (issue 17's anchor).

  python3 kineto_anchor.py --iters N                          # plain (run it under `rawtrace record`)
  python3 kineto_anchor.py --iters N --kineto cuda|cpu,cuda --trace out.json --pin CPU --repeat 3 --result r.json
  python3 kineto_anchor.py --count trace.json [more.json ...]  # JSON events per file, by phase

The program is a loop of small eager ops (an in-place add: one kernel; a device-to-device copy; every 8th
iteration a pinned host-to-device copy and a fill kernel), so that a run yields about a million trace events in a few
seconds. Under --kineto it runs inside torch.profiler and times `export_chrome_trace` — Kineto's ChromeTraceLogger
writing the JSON, as a PyTorch user runs it — with the exporting thread pinned to one CPU; --repeat profiled runs,
each exported once (Kineto saves a trace only once). The
event count is the number of `"ph"` keys in the file (every trace event has exactly one).
"""
import argparse, json, os, re, statistics, sys, time

p = argparse.ArgumentParser()
p.add_argument("--iters", type=int, default=100000)
p.add_argument("--kineto", help="profile with torch.profiler: 'cuda' or 'cpu,cuda' activities")
p.add_argument("--trace", help="where --kineto writes its JSON")
p.add_argument("--pin", type=int, help="CPU the exporting thread is pinned to")
p.add_argument("--repeat", type=int, default=3)
p.add_argument("--result", help="JSON summary of the --kineto run")
p.add_argument("--count", nargs="+", help="count the trace events of these JSON files and exit")
a = p.parse_args()

PH = re.compile(rb'"ph" *: *"(.)"')


def count(path):
    """Events by phase letter in a Chrome trace JSON file (one `"ph"` per event)."""
    by = {}
    with open(path, "rb") as f:
        data = f.read()
    for m in PH.finditer(data):
        k = m.group(1).decode()
        by[k] = by.get(k, 0) + 1
    return {"events": sum(by.values()), "by_ph": by, "bytes": len(data)}


if a.count:
    print(json.dumps({f: count(f) for f in a.count}))
    sys.exit(0)

import torch

dev = "cuda"
x = torch.zeros(4096, device=dev)
y = torch.empty_like(x)
h = torch.ones(4096).pin_memory()


def work(n):
    for i in range(n):
        x.add_(1.0)
        y.copy_(x)
        if i % 8 == 0:
            x.copy_(h, non_blocking=True)
            y.zero_()
    torch.cuda.synchronize()


work(200)  # warm: kernels loaded, allocator primed
if not a.kineto:
    t0 = time.perf_counter()
    work(a.iters)
    print(f"plain: {a.iters} iterations in {time.perf_counter() - t0:.2f} s")
    sys.exit(0)

from torch.profiler import profile, ProfilerActivity

acts = [{"cpu": ProfilerActivity.CPU, "cuda": ProfilerActivity.CUDA}[k] for k in a.kineto.split(",")]
cpus = os.sched_getaffinity(0)
secs, t_prof = [], []
for i in range(a.repeat):  # a profile's trace can be saved once: one profiled run per repeat
    os.sched_setaffinity(0, cpus)
    t0 = time.perf_counter()
    with profile(activities=acts) as prof:
        work(a.iters)
    t_prof.append(time.perf_counter() - t0)
    if a.pin is not None:
        os.sched_setaffinity(0, {a.pin})  # this thread only: Kineto's export runs on it
    t0 = time.perf_counter()
    prof.export_chrome_trace(a.trace)
    secs.append(time.perf_counter() - t0)
    del prof
c = count(a.trace)
med = statistics.median(secs)
r = {"activities": a.kineto, "iters": a.iters, "torch": torch.__version__, "profile_and_stop_s": t_prof,
     "export_s": secs, "export_median_s": med, **c, "events_per_s": c["events"] / med,
     "mb_per_s": c["bytes"] / med / 1e6}
print(json.dumps(r))
if a.result:
    json.dump(r, open(a.result, "w"), indent=1)
