"""A small JAX training loop for the real-GPU check of the CUDA collector (test/gpu/run_device_record.sh).

  python3 jax_step.py --steps 10 [--xspace DIR]

XLA compiles one jitted step (an MLP with a softmax cross-entropy loss, plain SGD), so every step launches the
same kernels; fixed seeds and shapes make kernel names and counts comparable between a run under rawtrace's
collector (CUDA_INJECTION64_PATH) and a run under JAX's own profiler (--xspace writes its XSpace there; the two
cannot share a process: each owns CUPTI's activity API).
"""
import argparse, time
import jax
import jax.numpy as jnp

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=10)
p.add_argument("--warmup", type=int, default=3)
p.add_argument("--xspace")
a = p.parse_args()

k = jax.random.PRNGKey(0)
k1, k2, k3, k4 = jax.random.split(k, 4)
params = {
    "w1": jax.random.normal(k1, (512, 1024)) * 0.02, "b1": jnp.zeros(1024),
    "w2": jax.random.normal(k2, (1024, 10)) * 0.02, "b2": jnp.zeros(10),
}
x = jax.random.normal(k3, (256, 512))
y = jax.random.randint(k4, (256,), 0, 10)


def loss_fn(p, x, y):
    h = jax.nn.gelu(x @ p["w1"] + p["b1"])
    logits = h @ p["w2"] + p["b2"]
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))


@jax.jit
def step(p, x, y):
    loss, g = jax.value_and_grad(loss_fn)(p, x, y)
    return jax.tree_util.tree_map(lambda w, d: w - 1e-2 * d, p, g), loss


for _ in range(a.warmup):
    params, loss = step(params, x, y)
loss.block_until_ready()


def run():
    global params
    times = []
    for i in range(a.steps):
        t0 = time.perf_counter()
        with jax.profiler.StepTraceAnnotation("train", step_num=i):
            params, loss = step(params, x, y)
            loss.block_until_ready()
        times.append(time.perf_counter() - t0)
    return times


if a.xspace:
    with jax.profiler.trace(a.xspace):
        times = run()
else:
    times = run()
print(f"steps {a.steps}, median step {sorted(times)[len(times)//2]*1e3:.3f} ms, loss {float(loss):.4f}")
