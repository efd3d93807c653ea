# %% [markdown]
# # Underflow and loss scaling
#
# The mixed-precision training paper (Micikevicius et al., 2018) and the blog posts that
# retell it show one histogram again and again: the activation gradients of an SSD detector
# trained in FP32, most of them far below 1, a large share below 2^-24, FP16's smallest
# subnormal -- values that become exactly zero when the backward pass runs in FP16.  The
# cure is to multiply the loss by 2^k before the backward pass and divide the gradients by
# 2^k afterwards.
#
# This notebook reproduces that histogram on a model you can train in seconds: the
# training lab's multilayer perceptron (64-128-10, ReLU) on scikit-learn's handwritten
# digits, every product and rounding emulated bit for bit by `softfloat.training`.
#
# **What you will learn**
#
# - where the gradients of a real training run lie on the binary exponent axis, and which
#   of them FP16 flushes to zero or stores as imprecise subnormals;
# - why the share below 2^-24 grows as training converges;
# - what scaling the loss by 2^k does to that histogram, and why no single k fits every
#   gradient into FP16;
# - how dynamic loss scaling (torch.amp.GradScaler's rule) finds a scale by itself,
#   growing it and backing off on overflow;
# - why BF16, with FP32's exponent range, needs no loss scaling at all.
#
# Sizes are small so that the notebook runs in well under a minute on a laptop: 20 epochs
# for the FP32 run and 5 for the FP16 and BF16 runs, 64 images a step (the `EPOCHS` and
# `epochs=` arguments below; raise them to see the trends continue).

# %%
import numpy as np
import matplotlib.pyplot as plt
import softfloat as sf
from softfloat import training as T

plt.rcParams.update({"figure.dpi": 90, "figure.figsize": (7, 4), "axes.grid": True, "grid.color": "0.9"})

SEED, EPOCHS = 0, 20
fp16, bf16 = sf.fp16, sf.bf16
print(f"FP16: smallest subnormal 2^{np.log2(fp16.min_subnormal):.0f}, smallest normal "
      f"2^{np.log2(fp16.min_normal):.0f}, largest {fp16.max_finite:g}")
print(f"BF16: smallest subnormal 2^{np.log2(bf16.min_subnormal):.0f}, smallest normal "
      f"2^{np.log2(bf16.min_normal):.0f}, largest {bf16.max_finite:.4g}")


def pct(share):
    """A share (0..1) as the percentage this notebook prints."""
    return f"{100 * share:.3f}%"


def shade_fp16(ax, right=21):
    """FP16's three regions on a log2 axis, hatched so that they read in grayscale."""
    ax.axvspan(-70, -24, facecolor="none", edgecolor="0.72", hatch="x", lw=0, zorder=0,
               label="zero in FP16 (< 2^-24)")
    ax.axvspan(-24, -14, facecolor="none", edgecolor="0.72", hatch="//", lw=0, zorder=0,
               label="FP16 subnormal [2^-24, 2^-14)")
    ax.axvspan(-14, 16, facecolor="0.93", edgecolor="none", zorder=0,
               label="FP16 normal [2^-14, 65504]")
    ax.axvline(16, color="black", lw=1, ls="-")
    ax.text(16.4, ax.get_ylim()[1] * 0.97, "overflow\n> 65504", fontsize=8, va="top")
    ax.set_xlim(-66, right)


# %% [markdown]
# ## 1. The gradients of an FP32 run
#
# `T.run("fp32", ...)` trains with every tensor in FP32 (Apex's O0).  Its report carries
# two exponent histograms, built from the float32 bits of every gradient of every step:
# the **activation gradients** (the gradients of the loss with respect to each layer's
# output, what the backward pass hands from layer to layer) and the **weight gradients**.
# Bin e counts the values with 2^e <= |g| < 2^(e+1).  Exact zeros (ReLU's dead units) are
# counted apart and left out of the shares.

# %%
report = T.run("fp32", epochs=EPOCHS, seed=SEED)
act, wgt = report.histograms["activation_grads"], report.histograms["weight_grads"]
print(f"fp32 run: {EPOCHS} epochs, seed {SEED}, batch 64, SGD momentum 0.9, lr 0.1; "
      f"test accuracy {100 * report.accuracy:.1f}%")
for name, h in (("activation gradients", act), ("weight gradients", wgt)):
    below24, below14 = h.mass_below(2.0**-24), h.mass_below(2.0**-14)
    print(f"{name}: {h.nonzero} non-zero values, binary exponents {min(h.counts)} to {max(h.counts)}")
    print(f"  below 2^-24 (zero in FP16):            {pct(below24)}")
    print(f"  in [2^-24, 2^-14) (FP16 subnormal):     {pct(below14 - below24)}")
    print(f"  above 65504 (overflow in FP16):         {pct(h.mass_above(65504.0))}")


# %%
def shares(h):
    """Binary exponents and the share (%) of the non-zero values in each bin."""
    exps = np.array(sorted(h.counts))
    return exps, 100 * np.array([h.counts[e] for e in exps]) / h.nonzero


fig, ax = plt.subplots()
e, s = shares(act)
ax.bar(e, s, width=0.85, color="0.35", label="activation gradients", zorder=2)
e, s = shares(wgt)
ax.step(e, s, where="mid", color="black", ls="--", lw=1.5, label="weight gradients", zorder=3)
shade_fp16(ax)
ax.set(xlabel="binary exponent e of |gradient|  (2^e <= |g| < 2^(e+1))",
       ylabel="share of non-zero values (%)",
       title=f"FP32 training: {pct(act.mass_below(2.0**-24))} of activation gradients "
             f"are below 2^-24")
ax.legend(fontsize=8, loc="upper left", framealpha=1)
plt.show()

# %% [markdown]
# The bars (activation gradients) and the dashed line (weight gradients) sit almost
# entirely left of 2^0: nothing comes near FP16's overflow at 65504, while the left tail
# runs into the cross-hatched band where FP16 has no numbers at all and through the
# diagonally hatched band of subnormals, where FP16 keeps fewer than 11 significant bits.
# The shares printed above are what an FP16 backward pass without loss scaling would lose
# outright (below 2^-24) or store imprecisely (subnormal).
#
# This small network's tail is thinner than the SSD detector's, and it moves: as the loss
# falls, the gradients shrink.  The same run, epoch by epoch (one histogram per epoch,
# through `T.Trainer`, the loop `run` uses):

# %%
trainer = T.Trainer("fp32", seed=SEED)
per_epoch = []
for epoch in range(EPOCHS):
    trainer.histograms = {"activation_grads": T.ExponentHistogram(), "weight_grads": T.ExponentHistogram()}
    losses = [trainer.step(x, y, epoch)["loss"] for x, y in trainer.batches()]
    h = trainer.histograms["activation_grads"]
    per_epoch.append((epoch + 1, float(np.mean(losses)), h.mass_below(2.0**-24), h.mass_below(2.0**-14)))
print("epoch   mean loss   act. grads below 2^-24   below 2^-14")
for ep, loss, b24, b14 in per_epoch:
    if ep in (1, 2, 5, 10, 15, 20):
        print(f"{ep:5d}   {loss:9.4f}   {pct(b24):>22s}   {pct(b14):>11s}")

# %% [markdown]
# Early in training almost nothing is below 2^-24; by the last epochs a noticeably larger
# share is.  Underflow is a problem of *late* training, when the model is nearly right and
# its errors -- hence its gradients -- are small.
#
# ## 2. Loss scaling by 2^k slides the histogram
#
# Multiplying the loss by 2^k multiplies every gradient of the backward pass by 2^k
# (the chain rule is linear), which moves each value from bin e to bin e + k and changes
# no significand.  `ExponentHistogram.shifted(k)` does exactly that to the recorded
# histogram, so the shares below 2^-24 and above 65504 after scaling are exact (an FP16
# backward pass would also round along the way; the histogram shows where the exact
# values land).

# %%
KS = (0, 3, 8, 12, 16, 20, 24)
print("  k   act. grads: below 2^-24   subnormal   above 65504 | weight grads: below 2^-24   subnormal   above 65504")
for k in KS:
    row = []
    for h in (act, wgt):
        sh = h.shifted(k)
        b24, b14 = sh.mass_below(2.0**-24), sh.mass_below(2.0**-14)
        row += [pct(b24), pct(b14 - b24), pct(sh.mass_above(65504.0))]
    print(f"{k:3d}   {row[0]:>22s}   {row[1]:>9s}   {row[2]:>11s} | {row[3]:>24s}   {row[4]:>9s}   {row[5]:>11s}")

def first_overflowing_k(h):
    return next(k for k in range(128) if h.shifted(k).mass_above(65504.0) > 0)


k_act, k_wgt = first_overflowing_k(act), first_overflowing_k(wgt)
first_overflow = min(k_act, k_wgt)
span = max(max(act.counts), max(wgt.counts)) - min(min(act.counts), min(wgt.counts)) + 1
fp16_binades = fp16.emax + 1 - int(np.log2(fp16.min_subnormal))
print(f"\nsmallest k with a value above 65504: activation gradients {k_act}, weight gradients {k_wgt}")
print(f"the gradients span {span} binades; FP16 covers {fp16_binades} (2^{int(np.log2(fp16.min_subnormal))} "
      f"up to 2^{fp16.emax + 1}), {fp16.emax + 1 - fp16.emin} of them normal")

# %%
fig, ax = plt.subplots()
for k, ls in zip((0, 8, 16, 24), ("-", "--", ":", "-.")):
    e, s = shares(act.shifted(k))
    ax.step(e, s, where="mid", color="black", ls=ls, lw=1.4,
            label=f"k = {k}: {pct(act.shifted(k).mass_below(2.0**-24))} below 2^-24")
shade_fp16(ax, right=25)
ax.set(xlabel="binary exponent of |activation gradient| x 2^k",
       ylabel="share of non-zero values (%)",
       title=f"Scaling by 2^k: {pct(act.mass_below(2.0**-24))} -> {pct(act.shifted(16).mass_below(2.0**-24))} "
             f"below 2^-24 (k = 0 -> 16)")
ax.legend(fontsize=8, loc="upper left", framealpha=1)
plt.show()

# %% [markdown]
# Each line is the histogram of the first figure slid k binades to the right.  As k grows
# the mass left of 2^-24 shrinks (the legend prints how much is left), but the right edge
# approaches the overflow line: with the largest k drawn part of the histogram lies beyond
# 65504, where FP16 has only infinity.  The table shows the trade for both tensors.  The
# weight gradients, whose largest values are larger, overflow first, at the k printed
# above; below it, every increase of k rescues gradients for free.  Because the gradients
# span more binades than FP16 has, some k in between loses the least but none loses
# nothing.
#
# ## 3. Dynamic loss scaling finds the scale by itself
#
# A fixed k has to be chosen per model and per phase of training.  Dynamic loss scaling
# (torch.amp.GradScaler, Apex's `loss_scale="dynamic"`) starts high, at 2^16, and adjusts:
# a step whose gradients contain an infinity or NaN is **skipped** and the scale is halved
# (a backoff); after `growth_interval` clean steps in a row the scale doubles.  GradScaler
# waits 2000 steps before growing; this run is only a hundred-odd steps long (printed
# below), so we set `growth_interval=10` to see growth and backoff in it.  The policy is Apex's O2 (FP16
# model, activations and gradients, FP32 master weights).

# %%
dyn = T.run("O2", epochs=5, seed=SEED, growth_interval=10)
scales = np.array(dyn.loss_scales)
skipped = np.array(dyn.telemetry.column("skipped"))
grew = np.flatnonzero(scales[1:] > scales[:-1]) + 1      # steps that start with a larger scale
backed = np.flatnonzero(scales[1:] < scales[:-1]) + 1    # ... with a smaller one
print(f"O2, 5 epochs, seed {SEED}, LossScaler(init_scale=2**16, growth_interval=10): {len(scales)} steps")
print(f"growths: {len(grew)}, backoffs: {len(backed)}, skipped steps: {int(skipped.sum())}")
print(f"scale: from 2^{np.log2(scales[0]):.0f} up to 2^{np.log2(scales.max()):.0f}, "
      f"final 2^{np.log2(scales[-1]):.0f}; test accuracy {100 * dyn.accuracy:.1f}%")

# %%
fig, ax = plt.subplots()
steps = np.arange(len(scales))
ax.step(steps, scales, where="post", color="black", lw=1.2, label="loss scale")
ax.plot(np.flatnonzero(skipped), scales[skipped], "v", color="black", ms=8,
        label="overflow: step skipped, scale halved")
ax.plot(grew, scales[grew], "^", mfc="white", mec="black", ms=7, label="10 clean steps: scale doubled")
ax.set_yscale("log", base=2)
ax.set(xlabel="training step", ylabel="loss scale (log scale, base 2)",
       title=f"Dynamic loss scaling: {len(grew)} growths, {len(backed)} backoffs in {len(scales)} steps")
ax.legend(fontsize=8, loc="lower right")
plt.show()
print(f"highest scale 2^{np.log2(scales.max()):.0f}; first overflowing k of section 2: {first_overflow}")

# %% [markdown]
# The staircase climbs one binade per 10 clean steps until a step's gradients overflow
# FP16 (a filled triangle): that step is skipped -- the weights do not move -- and the
# scale halves.  The scale then hovers just under the largest value the gradients tolerate.
# Compare the highest scale the scaler reached (printed below) with the first overflowing k
# of section 2: both mark where the largest gradients meet 65504 (the FP32 histogram pools
# 20 epochs, the FP16 run has its own gradients, so they agree only roughly).  The price of
# the method is one skipped step per backoff.
#
# ## 4. BF16 for contrast
#
# BF16 keeps FP32's 8 exponent bits: its smallest subnormal is 2^-133 and its smallest
# normal 2^-126, so the whole FP32 histogram of section 1 fits with room to spare.

# %%
for name, h in (("activation gradients", act), ("weight gradients", wgt)):
    print(f"{name} of the fp32 run below BF16's smallest subnormal 2^-133: {pct(h.mass_below(bf16.min_subnormal))}, "
          f"below its smallest normal 2^-126: {pct(h.mass_below(bf16.min_normal))}")

# %% [markdown]
# The same holds in training: three runs of 5 epochs on the same seed, all with FP32 master
# weights -- O2 without loss scaling, O2 with dynamic scaling (GradScaler's defaults), and
# the `bf16` policy, which uses no loss scaling.  The lab counts, per step, the weight
# gradients whose rounding into the gradient format underflowed (to zero, or to a subnormal
# inexactly).

# %%
runs = {"FP16, no loss scaling": T.run("O2", epochs=5, seed=SEED, loss_scale="none"),
        "FP16, dynamic loss scaling": T.run("O2", epochs=5, seed=SEED, loss_scale="dynamic"),
        "BF16, no loss scaling": T.run("bf16", epochs=5, seed=SEED)}
for name, r in runs.items():
    s = r.summary()
    print(f"{name:28s} weight gradients underflowed per step (mean): {pct(s['grad_underflow'])}, "
          f"skipped steps: {s['skipped_steps']}, test accuracy {100 * r.accuracy:.1f}%")

# %%
fig, ax = plt.subplots()
for (name, r), ls, marker in zip(runs.items(), ("-", "--", ":"), (None, None, "o")):
    ax.plot(100 * np.array(r.telemetry.column("grad_underflow")), color="black", ls=ls, lw=1.3,
            marker=marker, ms=3, markevery=5, label=name)
no_scale = runs["FP16, no loss scaling"].summary()["grad_underflow"]
bf = runs["BF16, no loss scaling"].summary()["grad_underflow"]
ax.set_yscale("symlog", linthresh=0.01)
ax.set(xlabel="training step", ylabel="weight gradients underflowed (%)",
       title=f"Unscaled FP16 underflows {pct(no_scale)} of weight gradients; BF16 {pct(bf)}")
ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0.0, 0.8), framealpha=1)
plt.show()

# %% [markdown]
# The solid line (FP16 without scaling) climbs as training proceeds and the gradients
# shrink, just as the epoch table of section 1 predicts; dynamic loss scaling (dashed)
# keeps it near zero; BF16 (dotted, with circles) stays at zero without any scaling (the
# vertical axis is linear below 0.01% and logarithmic above, so that all three show).
# Compare the test accuracies printed above: on this small model, within 5 epochs, the
# lost gradients cost little or nothing -- the histogram tells you how close to the edge
# a model runs, not by itself how much accuracy it will lose.  BF16
# pays instead in precision -- 8 significant bits against FP16's 11 -- which is the subject
# of the swamping and mixed-precision notebooks.
#
# ## Exercises
#
# 1. Repeat section 1 with `T.run("fp32", epochs=EPOCHS, seed=SEED, lr=0.01)`.  Does a
#    smaller learning rate (slower convergence) change the share below 2^-24 after 20
#    epochs?  Why?
# 2. Find the k that minimises the share of activation gradients lost (below 2^-24 plus
#    above 65504) with `act.shifted(k)`; then do the same for both tensors at once.  Which
#    tensor decides?
# 3. Run O2 with a static scale, `loss_scale=2.0**k`, for the k of exercise 2 and for
#    k = 24.  What happens to the loss when the scale is too large and nothing skips the
#    overflowing steps?
# 4. Change `growth_interval` in section 3 to 2 and to 50.  How do the number of skipped
#    steps and the average scale change?  What does GradScaler's default of 2000 buy?
# 5. Build the histogram of section 2 for FP8 E5M2 (smallest subnormal 2^-16, largest
#    57344): how many binades does it cover, and how does that compare with the span of
#    the gradients?  (`sf.fp8_e5m2.min_subnormal`, `.max_finite`.)
