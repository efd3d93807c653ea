"""Time emulated torch work against plain torch fp32, same run.

1. ``F.linear`` forward + backward: x (256 x 1024) times w^T (1024 x 1024), then
   ``y.backward(g)`` (the dgrad and wgrad products);
2. a GPT training step (forward, backward, AdamW step) of the minGPT-style model of
   tests/torch_models.py: 2 layers, 64 wide, 2 heads, batch 8, context 32, the character
   vocabulary of its corpus (46 characters);

3. a small model's training step (``--part mlp``): a 2-layer MLP 32 -> 64 -> 10, batch 16,
   cross-entropy and an SGD step, where the per-product overhead is the cost (under the
   recipes fp32, fp16, bf16, fp8, fp8-current and fp8 on "h100", each with its own
   accumulator; 20 steps in one emulation, the least of ``--repeat``);

1. and 2. under

    plain torch float32                                  (the reference)
    emulate("bf16", accumulator="fp32")                  (bf16 operands and outputs)
    emulate("fp8", accumulator="fp32")                   (TE delayed scaling, fp32 sums)
    emulate("fp8", accumulator="h100")                   (TE delayed scaling, h100 model)

with and without telemetry.  Output: milliseconds per call and the ratio to torch.

    python benchmarks/bench_torch.py
    python benchmarks/bench_torch.py --part gpt --repeat 5 --threads 1
    python benchmarks/bench_torch.py --part mlp --repeat 30 --threads 1
    python benchmarks/bench_torch.py --m 64 --repeat 1
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

import softfloat.torch as sft
from timing import best_of, timeit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.torch_models import CHARS, GPT, batch  # noqa: E402

#: (recipe, accumulator) of the emulated runs
RUNS = (("bf16", "fp32"), ("fp8", "fp32"), ("fp8", "h100"))


def _table(title, step, make, repeat, runs=RUNS, per=1, clock=timeit):
    """Time ``step`` in plain torch and under each of ``runs`` (``make(recipe, acc,
    telemetry)`` gives the timed callable; ``per`` steps a call); print ms a step and the
    ratio to torch."""
    print(title)
    base = clock(step, repeat) / per
    print(f"{'torch float32':52s} {base * 1e3:10.2f} ms   1.0x")
    for recipe, acc in runs:
        for telemetry in (False, True):
            t = clock(make(recipe, acc, telemetry), repeat) / per
            label = f'emulate("{recipe}"' + ("" if acc is None else f', accumulator="{acc}"') + ")" + (
                " +telemetry" if telemetry else "")
            print(f"{label:52s} {t * 1e3:10.2f} ms {t / base:7.1f}x")
    print()


def bench_linear(args) -> None:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(args.m, args.k, generator=gen, requires_grad=True)
    w = (torch.randn(args.n, args.k, generator=gen) / args.k ** 0.5).requires_grad_(True)
    g = torch.randn(args.m, args.n, generator=gen)

    def step():
        x.grad = w.grad = None
        F.linear(x, w).backward(g)

    def emulated(recipe, accumulator, telemetry):
        def run():
            with sft.emulate(recipe, accumulator=accumulator, telemetry=telemetry):
                step()
        return run

    _table(f"F.linear forward+backward, x {args.m}x{args.k} @ w^T {args.k}x{args.n} "
           f"(threads: {torch.get_num_threads()})", step, emulated, args.repeat)


def bench_gpt(args) -> None:
    torch.manual_seed(0)
    model = GPT(n_layer=2, n_head=2, n_embd=64, block_size=32)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, y = batch(torch.Generator().manual_seed(0), 8, 32)

    def step():
        _, loss = model(x, y)
        loss.backward()
        opt.step()
        opt.zero_grad()

    def emulated(recipe, accumulator, telemetry):
        em = sft.emulate(recipe, accumulator=accumulator, telemetry=telemetry, model=model)

        def run():  # one Emulation for every step: delayed scaling keeps its history
            with em:
                step()
        return run

    products = _products(model, x, y)
    _table(f"GPT training step: 2 layers, 64 wide, batch 8, context 32, vocabulary {len(CHARS)}; "
           f"{products} emulated products a step (threads: {torch.get_num_threads()})", step, emulated, args.repeat)


#: the recipes of the small model's table (each with its own accumulator)
MLP_RUNS = (("fp32", None), ("fp16", None), ("bf16", None), ("fp8", None), ("fp8-current", None), ("fp8", "h100"))
#: training steps a timed call of the small model runs (in one emulation, as a training loop does)
MLP_STEPS = 20


def bench_mlp(args) -> None:
    """A small model, where the per-product overhead is the cost: a 2-layer MLP 32 -> 64
    -> 10, batch 16, cross-entropy, one SGD step (5 emulated products a step); MLP_STEPS
    steps a call inside one emulation, the least time of ``repeat`` calls (a shared
    machine preempts some)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(16, 32, generator=gen), torch.randint(0, 10, (16,), generator=gen)

    def steps():
        for _ in range(MLP_STEPS):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()

    def emulated(recipe, accumulator, telemetry):
        em = sft.emulate(recipe, accumulator=accumulator, telemetry=telemetry, model=model)

        def run():
            with em:
                steps()
            em.telemetry.clear()  # (one record a product: kept across calls it would grow)
        return run

    _table(f"MLP 32 -> 64 -> 10 training step, batch 16, SGD (threads: {torch.get_num_threads()}; "
           f"ms a step, least of {args.repeat} x {MLP_STEPS} steps)", steps, emulated, args.repeat, MLP_RUNS,
           MLP_STEPS, best_of)


def _products(model, x, y) -> int:
    with sft.emulate("bf16", telemetry=False, model=model) as em:
        model(x, y)[1].backward()
    model.zero_grad()
    return len(em.telemetry)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("linear", "gpt", "mlp", "all"), default="all")
    parser.add_argument("--m", type=int, default=256, help="rows of x (linear)")
    parser.add_argument("--k", type=int, default=1024, help="inputs per row = columns of w (linear)")
    parser.add_argument("--n", type=int, default=1024, help="outputs = rows of w (linear)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None,
                        help="torch.set_num_threads (default: torch's own; 1 on a shared machine, where "
                             "torch's pool on a busy core slows the plain-torch reference a hundredfold)")
    args = parser.parse_args()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    if args.part in ("linear", "all"):
        bench_linear(args)
    if args.part in ("gpt", "all"):
        bench_gpt(args)
    if args.part in ("mlp", "all"):
        bench_mlp(args)


if __name__ == "__main__":
    main()
