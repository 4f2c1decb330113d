"""Inference replayed from a CUDA graph, for the real-GPU check of graph-launched kernels (run_device_record.sh).

  python3 torch_graph.py --replays 10

The model's forward pass is captured once into a torch.cuda.CUDAGraph and replayed; CUPTI reports the replayed
kernels with a graph id and graph node ids, the launches as cudaGraphLaunch runtime calls.
"""
import argparse
import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--replays", type=int, default=10)
a = p.parse_args()

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(512, 1024), nn.GELU(), nn.Linear(1024, 512), nn.LayerNorm(512)).cuda().eval()
x = torch.randn(128, 512, device="cuda")
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.no_grad(), torch.cuda.stream(s):
    for _ in range(3):
        model(x)  # warm-up on a side stream, as capture requires
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.no_grad(), torch.cuda.graph(g):
    out = model(x)
for _ in range(a.replays):
    g.replay()
torch.cuda.synchronize()
print(f"replays {a.replays}, out {float(out.float().abs().mean()):.4f}")
