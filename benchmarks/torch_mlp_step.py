"""The MLP step of `bench_mlp.py` in PyTorch, on the CPU: issue 17's outside reference.

PyTorch is not a dependency. `bench_mlp.py` runs this script in a child process when
``torch`` can be imported (a separate process, so that PyTorch's thread pool and
OpenBLAS's never share one)::

    python benchmarks/torch_mlp_step.py            # both optimizers
    python benchmarks/torch_mlp_step.py adam

Prints one JSON line per optimizer: the best mean step time (ms) over 7 repeats of 50
steps, PyTorch's default threads, the same model, batches and learning rates as
`bench_mlp.py` (784-512-512-10 ReLU, batch 256, mean sparse softmax cross-entropy, SGD or
Adam, `optimizer.zero_grad(set_to_none=True)`, the loss read back as a Python float each
step as ``sess.run([train_op, loss])`` does).
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

SIZES = (784, 512, 512, 10)
BATCH = 256
N_BATCHES = 4
LR = {"sgd": 0.01, "adam": 1e-3}


def step_ms(optimizer: str, repeats: int = 7, steps: int = 50) -> float:
    import torch

    torch.manual_seed(0)
    rng = np.random.RandomState(0)  # bench_mlp.make_batches' data
    xs = [torch.from_numpy(rng.rand(BATCH, SIZES[0]).astype(np.float32))
          for _ in range(N_BATCHES)]
    ys = [torch.from_numpy(rng.randint(0, SIZES[-1], BATCH).astype(np.int64))
          for _ in range(N_BATCHES)]
    model = torch.nn.Sequential(
        torch.nn.Linear(SIZES[0], SIZES[1]), torch.nn.ReLU(),
        torch.nn.Linear(SIZES[1], SIZES[2]), torch.nn.ReLU(),
        torch.nn.Linear(SIZES[2], SIZES[3]))
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = (torch.optim.Adam(model.parameters(), lr=LR["adam"], betas=(0.9, 0.999), eps=1e-8)
           if optimizer == "adam" else torch.optim.SGD(model.parameters(), lr=LR["sgd"]))

    def step(i: int) -> float:
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(xs[i % N_BATCHES]), ys[i % N_BATCHES])
        loss.backward()
        opt.step()
        return loss.item()

    for i in range(30):
        step(i)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for i in range(steps):
            step(i)
        best = min(best, (time.perf_counter() - t0) / steps)
    return best * 1e3


def main(argv: list[str]) -> int:
    import torch

    for name in argv or ["sgd", "adam"]:
        print(json.dumps({"bench": "torch_mlp_step", "optimizer": name,
                          "torch": torch.__version__, "threads": torch.get_num_threads(),
                          "ms_per_step": round(step_ms(name), 4)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
