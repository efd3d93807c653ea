# %% [markdown]
# # Mixed-precision training, policy by policy
#
# Mixed-precision recipes decide, tensor by tensor, which format each number lives in: the
# weights the products use, a master copy the optimizer updates, the activations, the
# gradients, the accumulators, the optimizer's state.  Apex named four levels (O0 to O3);
# BF16 and FP8 recipes followed.  This notebook trains the same small network under each
# of them, from the same seed, with every rounding emulated bit for bit by
# `softfloat.training`, and looks at what the recipes are meant to prevent.
#
# **What you will learn**
#
# - how the lab's policies `fp32` (O0), `O1`, `O2`, `O3`, `bf16` and `fp8` place the
#   tensors, and how their loss curves and accuracies compare on one seed;
# - what a *swamped* update is, and why keeping FP32 master weights (O2) instead of
#   updating FP16 weights in place (O3) avoids it;
# - that pure BF16 training swamps far more, and that stochastic rounding of the update
#   rescues it;
# - how much of the FP16 gradients underflow with and without loss scaling;
# - how many bytes per parameter each recipe stores -- and why mixed precision with Adam
#   saves no static memory at all.
#
# The model is the lab's 64-128-10 ReLU network on scikit-learn's handwritten digits
# (batches of 64, SGD with momentum 0.9).  Runs are short, 8 epochs,
# so that the whole notebook executes in about a minute; the trends continue with more.

# %%
import numpy as np
import matplotlib.pyplot as plt
from softfloat import training as T

plt.rcParams.update({"figure.dpi": 90, "figure.figsize": (7, 4), "axes.grid": True, "grid.color": "0.9"})
SEED, EPOCHS = 0, 8
POLICIES = ["fp32", "O1", "O2", "O3", "bf16", "fp8"]
STYLE = {"fp32": ("-", "o"), "O1": ("--", "s"), "O2": (":", "^"), "O3": ("-.", "v"),
         "bf16": ((0, (5, 1, 1, 1, 1, 1)), "D"), "fp8": ((0, (1, 3)), "x")}


def pct(share):
    """A share (0..1) as the percentage this notebook prints."""
    return f"{100 * share:.2f}%"


for name in POLICIES:
    p = T.as_policy(name)
    master = p.master.name if p.master is not None else "none"
    print(f"{name:5s} weights {p.params.name:5s} master {master:5s} activations {p.activations.name:5s} "
          f"gradients {p.gradients.name:5s} products {p.matmul_inputs.name:5s} accumulate {p.accumulator!s:5s} "
          f"optimizer {p.optimizer_state.name:5s} loss scaling {p.loss_scale}"
          + (f", fp8 '{p.fp8}' {p.fp8_forward.name}/{p.fp8_backward.name}" if p.fp8 else ""))

# %% [markdown]
# Read the table row by row: O1 keeps FP32 weights and casts them to FP16 for each matrix
# product; O2 stores an FP16 model and keeps an FP32 master copy for the optimizer; O3 is
# FP16 everywhere, with no master copy and no loss scaling; `bf16` is O2 with BF16 in place
# of FP16 and no loss scaling; `fp8` rounds the operands of every matrix product into FP8
# (E4M3 forward, E5M2 for gradients) with Transformer Engine's delayed per-tensor scaling.
#
# ## 1. Six policies, one seed
#
# `T.compare` runs each policy with the same arguments -- the same initial weights, the same
# batches -- and returns one summary row per policy.

# %%
reports = []
table = T.compare(POLICIES, epochs=EPOCHS, seed=SEED, reports=reports)
runs = dict(zip(POLICIES, reports))
print(f"{EPOCHS} epochs, seed {SEED}, batch 64, SGD momentum 0.9, lr 0.1\n")
print(table)

# %%
fig, (ax, ax_d) = plt.subplots(1, 2, figsize=(10, 4))
epochs = np.arange(1, EPOCHS + 1)
base = np.array(runs["fp32"].epoch_losses)
for name, r in runs.items():
    ls, marker = STYLE[name]
    loss = np.array(r.epoch_losses)
    ax.plot(epochs, loss, ls=ls, marker=marker, color="black", mfc="white", ms=5, label=name)
    ax_d.plot(epochs, loss - base, ls=ls, marker=marker, color="black", mfc="white", ms=5, label=name)
ax.set_yscale("log")
ax.set(xlabel="epoch", ylabel="mean training loss (log scale)", title="Loss per epoch")
ax_d.set_yscale("symlog", linthresh=1e-4)
ax_d.set(xlabel="epoch", ylabel="loss minus fp32's loss (symlog)", title="Difference from fp32")
ax.legend(fontsize=8)
worst = max((n for n in POLICIES if n != "fp32"), key=lambda n: abs(runs[n].epoch_losses[-1] - base[-1]))
fig.suptitle(f"All six policies train alike; the largest final gap to fp32 is {worst}'s "
             f"({runs[worst].epoch_losses[-1] - base[-1]:+.4f})")
fig.tight_layout()
plt.show()

# %% [markdown]
# On the left the six curves lie on top of each other; the right panel magnifies their
# distance from the FP32 run (linear within +-1e-4, logarithmic beyond).  O1 and O2 follow
# FP32 closely: FP32 accumulation and FP32 weights leave only the rounding of the FP16
# operands.  Their two curves coincide -- the losses are identical, as printed below --
# because both round the same FP32 weights to FP16 for every product, and both update
# those FP32 weights with the same FP32 arithmetic (O2 merely stores the FP16 copy).  The
# policy with the largest gap is named in the title.
#
# The final accuracies, from the table above:

# %%
print("policy  test accuracy  train accuracy  final loss")
for name, r in runs.items():
    print(f"{name:6s}  {100 * r.accuracy:12.1f}%  {100 * r.train_accuracy:13.1f}%  {r.epoch_losses[-1]:10.4f}")
print(f"\nO1's and O2's losses identical at every step: {runs['O1'].losses == runs['O2'].losses}")
spread = max(r.accuracy for r in reports) - min(r.accuracy for r in reports)
n_test = len(T.data.load().y_test)
print(f"\nspread of test accuracy across the six policies: {100 * spread:.1f} percentage points "
      f"({round(spread * n_test)} of {n_test} test images)")

# %% [markdown]
# At this size every recipe reaches nearly the same accuracy: the spread printed above is a
# handful of test images.  The differences between the recipes are in what happened to the
# numbers on the way, which the lab's telemetry records step by step.
#
# ## 2. Swamped updates: why FP32 master weights
#
# An update w - lr * v is *swamped* when it is not zero but the stored weight does not
# change: the update is smaller than half the spacing of the weight's format around w.  In
# FP16, with 11 significant bits, that happens whenever |w| is about 2^11 = 2048 times
# larger than the update (the seeds' 2048x ratio).  O3 rounds each update into the FP16
# weights; O2 applies it to an FP32 master copy (24 bits), from which the FP16 weights are
# re-rounded each step, so small updates accumulate in the master copy until they show.
#
# Small updates are typical late in training, when the learning rate has decayed.  We
# imitate that with a second set of runs at lr = 0.001.

# %%
small_lr = {name: T.run(name, epochs=EPOCHS, seed=SEED, lr=0.001) for name in ("O2", "O3")}
print("share of non-zero updates that left the weight unchanged (mean over steps):")
for lr, o2, o3 in ((0.1, runs["O2"], runs["O3"]), (0.001, small_lr["O2"], small_lr["O3"])):
    s2, s3 = o2.summary(), o3.summary()
    print(f"lr {lr:<5g}  O2 {pct(s2['update_swamped']):>7s}   O3 {pct(s3['update_swamped']):>7s}   "
          f"test accuracy O2 {100 * o2.accuracy:.1f}%  O3 {100 * o3.accuracy:.1f}%   "
          f"final loss O2 {o2.epoch_losses[-1]:.4f}  O3 {o3.epoch_losses[-1]:.4f}")

# %%
fig, ax = plt.subplots()
for label, r, ls in (("O2, lr 0.1", runs["O2"], "-"), ("O3, lr 0.1", runs["O3"], "--"),
                     ("O2, lr 0.001", small_lr["O2"], ":"), ("O3, lr 0.001", small_lr["O3"], "-.")):
    ax.plot(100 * np.array(r.telemetry.column("update_swamped")), ls=ls, color="black", lw=1.2, label=label)
ax.set(xlabel="training step", ylabel="swamped updates (% of non-zero updates)",
       title=f"Without a master copy, O3 loses {pct(small_lr['O3'].summary()['update_swamped'])} "
             f"of its updates at lr 0.001")
ax.legend(fontsize=8, loc="center right")
plt.show()

# %% [markdown]
# The dashed and dash-dotted lines (O3) sit far above the solid and dotted ones (O2): with
# FP16 weights a large share of every step's updates is rounded away, more so the smaller
# the learning rate.  O2's share is not zero -- an FP32 weight can swamp an update too --
# but it is small.  On this network, though, the accuracy cost of O3's lost updates is
# small (compare the accuracies printed above): the paper's "80% relative accuracy loss"
# for FP16 weight updates came from much larger models and longer runs, and does not
# reproduce at this size.
#
# Pure BF16 training, with only 8 significant bits, swamps far more: an update is lost when
# the weight is about 2^8 = 256 times larger.  Three runs at lr = 0.001: BF16 with an FP32
# master copy (`bf16`), BF16 weights updated in place (`bf16-pure`), and the same with the
# update rounded stochastically -- up or down with probabilities that make the expected
# stored weight equal the exact one.

# %%
sr = T.as_policy("bf16-pure", update_rounding="stochastic")
pure = {"bf16 + fp32 master": T.run("bf16", epochs=EPOCHS, seed=SEED, lr=0.001),
        "bf16-pure, nearest even": T.run("bf16-pure", epochs=EPOCHS, seed=SEED, lr=0.001),
        "bf16-pure, stochastic": T.run(sr, epochs=EPOCHS, seed=SEED, lr=0.001)}
for name, r in pure.items():
    print(f"{name:24s} test accuracy {100 * r.accuracy:5.1f}%  final loss {r.epoch_losses[-1]:.4f}  "
          f"swamped updates {pct(r.summary()['update_swamped'])}")

# %%
fig, ax = plt.subplots()
for (name, r), ls, marker in zip(pure.items(), ("-", "--", ":"), ("o", "s", "^")):
    ax.plot(epochs, r.epoch_losses, ls=ls, marker=marker, color="black", mfc="white", label=name)
near_acc, sr_acc = pure["bf16-pure, nearest even"].accuracy, pure["bf16-pure, stochastic"].accuracy
ax.set(xlabel="epoch", ylabel="mean training loss",
       title=f"Pure BF16 at lr 0.001: {100 * near_acc:.1f}% accuracy; stochastic rounding {100 * sr_acc:.1f}%")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# With round-to-nearest-even (dashed), pure BF16 stalls: most updates are rounded away
# every step, and the loss falls far more slowly than with an FP32 master copy (solid).
# Stochastic rounding (dotted) also leaves most individual updates unapplied -- its
# swamped share printed above is high too -- but the updates it does apply are larger,
# in the right proportion, so on average the weights move as the exact updates would and
# the curve follows the master-copy run.  That is why FP32 master weights, or stochastic
# rounding where memory forbids them, are part of every low-precision recipe.
#
# ## 3. Underflow with and without loss scaling
#
# The other failure mode is at the bottom of the range: FP16 weight gradients below 2^-24
# become zero, and those between 2^-24 and 2^-14 lose bits (notebook 03 shows where they
# lie).  O2 with its dynamic loss scaling against the same policy without it:

# %%
unscaled = T.run("O2", epochs=EPOCHS, seed=SEED, loss_scale="none")
scaled = runs["O2"]
for name, r in (("O2, no loss scaling", unscaled), ("O2, dynamic loss scaling", scaled)):
    s = r.summary()
    print(f"{name:25s} weight gradients underflowed (mean per step) {pct(s['grad_underflow'])}, "
          f"test accuracy {100 * r.accuracy:.1f}%, final loss scale {s['final_loss_scale']:g}")
ratio = unscaled.summary()["grad_underflow"] / max(scaled.summary()["grad_underflow"], 1e-12)
print(f"loss scaling cuts the underflowed share {ratio:.0f}-fold")

# %%
fig, ax = plt.subplots()
ax.plot(100 * np.array(unscaled.telemetry.column("grad_underflow")), color="black", ls="-", lw=1.2,
        label="O2, no loss scaling")
ax.plot(100 * np.array(scaled.telemetry.column("grad_underflow")), color="black", ls="--", lw=1.2,
        label="O2, dynamic loss scaling")
ax.set_yscale("symlog", linthresh=0.01)
ax.set(xlabel="training step", ylabel="weight gradients underflowed in FP16 (%)",
       title=f"Loss scaling cuts FP16 gradient underflow {ratio:.0f}-fold")
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0.0, 0.8), framealpha=1)
plt.show()
print(f"loss scales used by the scaled run: {sorted(set(scaled.loss_scales))}")

# %% [markdown]
# Without scaling (solid) a growing share of each step's weight gradients underflows as the
# gradients shrink; with dynamic scaling (dashed) almost none does.  Its scale never moved
# from GradScaler's initial 2^16 (printed above): growth needs 2000 clean steps in a row, and
# no step overflowed.  The vertical axis is linear
# below 0.01% and logarithmic above.  As with swamping, this small model's accuracy hardly
# notices within a few epochs -- what the telemetry shows is how much of the gradient
# signal FP16 throws away, which decides whether a larger model trains.
#
# ## 4. Memory: what each recipe stores
#
# Training memory has a static part, proportional to the parameter count a, and a dynamic
# part, the activations kept for the backward pass (b values).  The seeds' accounting for
# Adam: FP32 training holds 4a bytes of weights, 4a of gradients and 8a of Adam's two
# moments, 16a in all, plus 4b; mixed precision holds 2a of FP16 weights, 4a of FP32 master
# weights, 2a of FP16 gradients and 8a of moments -- 16a again -- plus 2b.
# `T.memory_footprint(n_params, policy, optimizer, activations)` does this accounting from
# a policy's formats.  Our model's parameters and, as a simple count of the activations,
# every layer's width once per example of a batch:

# %%
trainer = T.Trainer("fp32", seed=SEED)
n_params = sum(p.size for p in trainer.model.params)
sizes = trainer.model.sizes
n_act = 64 * sum(sizes)
print(f"model {'-'.join(map(str, sizes))}: {n_params} parameters; activations: 64 x {sum(sizes)} = {n_act} values")
items = ("weights", "master_weights", "gradients", "optimizer_state", "activations", "total")
print(f"\nAdam, bytes:\n{'policy':10s}" + "".join(f"{k:>16s}" for k in items) + "   bytes/param (static)")
for name in ("fp32", "O1", "O2", "O3", "bf16", "bf16-pure", "fp8"):
    m = T.memory_footprint(n_params, name, "adam", activations=n_act)
    print(f"{name:10s}" + "".join(f"{m[k]:16d}" for k in items)
          + f"   {(m['total'] - m['activations']) / n_params:8g}")

# %% [markdown]
# The last column is the seeds' point: with Adam, FP32 (O0) and mixed precision with a
# master copy (O1, O2, bf16, fp8) all store 16 bytes per parameter; only the recipes
# without a master copy (O3, pure BF16) halve it, at the price of the swamping seen in
# section 2.  What mixed precision saves is the activation memory (the `activations`
# column halves) -- and, on real hardware, time, which this emulator does not model.
#
# The same accounting for a model of 7 billion parameters, static memory only (activations
# depend on batch size and sequence length):

# %%
big = 7 * 10**9
print(f"{'policy':10s}{'Adam (GB)':>12s}{'SGD+momentum (GB)':>20s}")
for name in ("fp32", "O2", "O3", "bf16-pure"):
    adam, sgd = (T.memory_footprint(big, name, opt)["total"] / 1e9 for opt in ("adam", "sgd"))
    print(f"{name:10s}{adam:12.0f}{sgd:20.0f}")

# %% [markdown]
# ## Exercises
#
# 1. Rerun section 1 with `optimizer="adam"` (lr 1e-3).  Does O3 still match the others?
#    Look at `updates_underflow` in O3's telemetry: Adam's small steps in FP16 state.
# 2. `T.as_policy("O2", accumulator="fp16")` accumulates the products in FP16.  Compare its
#    loss with O2's at batch size 64 and at `batch_size=1437` (full batch, so every weight
#    gradient sums 1437 products).  When does accumulation precision matter?
# 3. Add `"fp8-current"`, `"fp8-block"` and `"mxfp8"` to `POLICIES`.  Which FP8 recipe is
#    closest to FP32 here, and which is fastest to emulate?
# 4. Find the learning rate below which O3's test accuracy falls clearly behind O2's on this
#    model (try 1e-3, 3e-4, 1e-4 with more epochs).
# 5. Extend the memory table with gradient checkpointing in mind: if only every other
#    layer's activations were kept, how would the `activations` column change?  And what
#    would an FP8 copy of the weights (`T.as_policy("O2", params="fp8_e4m3")`) save?
