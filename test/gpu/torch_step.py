"""A small PyTorch training loop for the real-GPU check of the CUDA collector (test/gpu/run_device.sh).

  python3 torch_step.py --steps 30 [--kineto out.json] [--times out_times.json]

With --kineto, the same steps run under torch.profiler (CUPTI through Kineto) and its Chrome trace is written;
otherwise the loop runs plain (or under rawtrace's collector when CUDA_INJECTION64_PATH is set). Step times
(after warm-up) go to --times. Deterministic shapes, seeds and step count, so kernel names and counts can be
compared between a Kineto run and a rawtrace run.
"""
import argparse, json, os, signal, time
import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=30)
p.add_argument("--warmup", type=int, default=5)
p.add_argument("--kineto")
p.add_argument("--times")
p.add_argument("--range-name", default="train_step",
               help="NVTX range around each step; {i} is the step number (e.g. 'ProfilerStep#{i}', as PyTorch names steps)")
p.add_argument("--toggle-signal", help="signal to send to ourselves around the measured steps (RAWTRACE_SIGNAL)")
a = p.parse_args()

torch.manual_seed(0)
dev = "cuda"
model = nn.Sequential(
    nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
    nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 10),
).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
x = torch.randn(64, 3, 64, 64, device=dev)
y = torch.randint(0, 10, (64,), device=dev)
lossf = nn.CrossEntropyLoss()


n_step = 0


def step():
    global n_step
    name = a.range_name.format(i=n_step)
    n_step += 1
    with torch.cuda.nvtx.range(name):
        opt.zero_grad(set_to_none=True)
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
    return loss


for _ in range(a.warmup):
    step()
torch.cuda.synchronize()

times = []
if a.kineto:
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(a.steps):
            t0 = time.perf_counter(); step(); torch.cuda.synchronize(); times.append(time.perf_counter() - t0)
    prof.export_chrome_trace(a.kineto)
else:
    sig = getattr(signal, "SIG" + a.toggle_signal) if a.toggle_signal else None
    if sig:
        os.kill(os.getpid(), sig)  # rawtrace collection on: exactly the steps Kineto sees
        time.sleep(0.2)  # the collector starts CUPTI on its writer thread
    for _ in range(a.steps):
        t0 = time.perf_counter(); step(); torch.cuda.synchronize(); times.append(time.perf_counter() - t0)
    if sig:
        os.kill(os.getpid(), sig)
        time.sleep(0.2)
if a.times:
    json.dump({"step_s": times}, open(a.times, "w"))
print(f"steps {a.steps}, median step {sorted(times)[len(times)//2]*1e3:.3f} ms")
