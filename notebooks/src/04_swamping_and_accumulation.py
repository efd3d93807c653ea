# %% [markdown]
# # Swamping and accumulation: where long sums lose their small terms
#
# Adding a small number to a large one in floating point keeps only the bits of the small
# number that line up with the large one's significand; the rest is rounded away.  When the
# small number is less than half a unit in the last place (ulp) of the large one, *all* of
# it is lost: the large number "swamps" it.  Mixed-precision training meets this twice: in
# the weight update (a tiny step added to a much larger weight) and in every dot product
# (thousands of products added into one running sum).
#
# **What you will learn**
#
# 1. Why an FP16 weight ignores any update smaller than about 1/2048 of itself, and how that
#    ratio follows from the format's precision (FP16, BF16, FP32).
# 2. Why a running FP16 sum of ones stops growing at 2048, while an FP32 accumulator reaches
#    the right answer.
# 3. How the error of a dot product grows with its length for FP16, BF16 and FP32
#    accumulators, in sequential and pairwise order, and in the tensor-core models of the
#    V100, A100 and H100 -- including FP8 inputs on the H100 and the fix DeepSeek-V3 used
#    (promoting the partial sum to FP32 every 128 products).
# 4. How stochastic rounding rescues the stalled FP16 sum on average, and what it costs in
#    spread.
#
# Every number below is computed by softfloat in this notebook, bit for bit as the formats
# define it; the sizes are small (dot products up to 2^14 terms, a few trials) so the
# notebook runs in well under a minute -- the benchmarks in `benchmarks/` go further.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

import softfloat as sf

FORMATS = {"fp16": sf.fp16, "bf16": sf.bf16, "fp32": sf.fp32}

# %% [markdown]
# ## 1. The 2048x ratio: 1 + 2^-11 = 1 in FP16
#
# FP16 keeps p = 11 significant bits (10 stored, one implicit), so between 1 and 2 its values
# are 2^-10 apart.  Adding u = 2^-11 to 1 lands exactly halfway between 1 and the next value;
# round-to-nearest-even picks 1, whose last bit is even.  Any smaller u is rounded away as
# well.  Here is the addition done on FP16 bit patterns with `sf.add`, for the three formats
# of mixed-precision training, each at its own precision p: 1 + 2^-p is lost, 1 + 2^-(p-1)
# is kept.

# %%
def plus(w, u, fmt):
    """w + u, both rounded into fmt first, added with one correct rounding in fmt."""
    return float(sf.decode(sf.add(sf.encode(w, fmt), sf.encode(u, fmt), fmt), fmt))


for name, fmt in FORMATS.items():
    p = fmt.precision
    print(f"{name}: p = {p:2d}   1 + 2^-{p} = {plus(1.0, 2.0**-p, fmt)!r:<20}"
          f"1 + 2^-{p - 1} = {plus(1.0, 2.0**-(p - 1), fmt)!r}")

# %% [markdown]
# A weight w in [2^e, 2^(e+1)) has an ulp of 2^(e-p+1), so an update u vanishes when it is
# at most half of that, 2^(e-p).  Measured as the ratio w/u, that happens somewhere between
# 2^p (for w just at a power of two) and 2^(p+1) (for w just below the next one): FP16's
# "an update 2048 times smaller than the weight is lost" is the lower end, 2^11.  The scan
# below draws weights spread over four binades, divides them by ratios from 8 to 2^27, and
# counts how many FP16, BF16 and FP32 additions return the weight unchanged.

# %%
rng = np.random.default_rng(2024)
weights = 2.0 ** rng.uniform(-2, 2, size=2000)        # four binades, log-uniform
ratios = 2.0 ** (np.arange(3 * 16, 27 * 16 + 1) / 16)  # 16 ratios per octave
lost_share = {}
for name, fmt in FORMATS.items():
    w = sf.encode(weights, fmt)
    u = sf.encode(weights[None, :] / ratios[:, None], fmt)
    nonzero = sf.decode(u, fmt) != 0                    # an update that underflowed is no update
    lost = (sf.add(np.broadcast_to(w, u.shape), u, fmt) == w) & nonzero
    with np.errstate(invalid="ignore"):
        lost_share[name] = lost.sum(axis=1) / nonzero.sum(axis=1)

print("format  p   no update lost below w/u =   every update lost above w/u =   (theory: 2^p, 2^(p+1))")
for name, fmt in FORMATS.items():
    share = lost_share[name]
    first_loss = ratios[np.argmax(share > 0)]
    all_lost = ratios[np.argmax(share == 1)]
    print(f"{name:6s} {fmt.precision:2d}   2^{math.log2(first_loss):<6.3g}"
          f"{'':20s}2^{math.log2(all_lost):<6.3g}{'':25s}2^{fmt.precision}, 2^{fmt.precision + 1}")

# %%
fig, ax = plt.subplots(figsize=(7, 4), dpi=90)
styles = {"bf16": ("-", "o"), "fp16": ("--", "s"), "fp32": (":", "^")}
for name in ("bf16", "fp16", "fp32"):
    ls, marker = styles[name]
    ax.plot(ratios, lost_share[name] * 100, ls, color="k", marker=marker, markevery=16,
            label=f"{name} (p = {FORMATS[name].precision})")
ax.axvline(2048, color="0.5", lw=0.8)
ax.text(2.0 ** 12.4, 55, "<- w/u = 2^11 = 2048", color="0.3")
ax.set_xscale("log", base=2)
ax.set_xlabel("ratio of weight to update, w/u (log scale)")
ax.set_ylabel("updates lost, w + u == w (%)")
ax.set_title("An update vanishes once w/u passes 2^p:\n" + ", ".join(
    f"{n.upper()} 2^{FORMATS[n].precision}" for n in ("bf16", "fp16", "fp32")))
ax.legend(loc="center right")
fig.tight_layout()
plt.show()

# %% [markdown]
# Each curve stays at zero up to 2^p, climbs over one octave and stays at 100% beyond
# 2^(p+1): BF16 loses updates 8 times earlier than FP16, while FP32 keeps them until the
# ratio passes 2^24 (about 1.7 x 10^7).  That is why mixed-precision training adds the
# updates to an FP32 copy of the weights (the "master weights") even when the weights used
# in the forward pass are FP16 or BF16.

# %% [markdown]
# ## 2. A running sum of 4096 ones
#
# The same effect in a sum: add 1 to itself 4096 times.  In an FP16 accumulator the sum
# grows exactly to 2048 = 2^11, where the spacing of FP16 values becomes 2; 2048 + 1 is then
# a tie and rounds back to 2048, every time.  `sf.sum` with `accumulator=` chooses the
# format every addition is rounded into, and `return_flags=True` counts the additions whose
# non-zero term left the sum unchanged (`swamped`).

# %%
ones = np.full(4096, sf.encode(1.0, "fp16"))          # 4096 FP16 bit patterns of 1.0
totals = {}
for name in ("fp16", "bf16", "fp32"):
    bits, flags = sf.sum(ones, "fp16", accumulator=name, return_flags=True)
    totals[name] = float(sf.decode(bits, name))
    print(f"sum of 4096 ones, {name} accumulator: {totals[name]!r:8}  "
          f"(swamped additions: {int(flags.swamped)})")

# %% [markdown]
# The running (partial) sums come from the emulated-precision array type: `np.cumsum` on an
# `sf.Array` keeps its running sum in the context's accumulator, one correctly rounded
# addition per step, with no Python loop.  For the FP32 accumulator the ones are held in
# FP32 (converting FP16's 1.0 to FP32 is exact), so every running sum is stored in FP32.

# %%
with sf.context(accumulator="fp16"):
    partial16 = np.cumsum(sf.Array.from_bits(ones, "fp16")).tolist()
with sf.context(accumulator="bf16"):
    partial_bf16 = np.cumsum(sf.asarray(np.ones(4096), "bf16")).tolist()
partial32 = np.cumsum(sf.asarray(np.ones(4096), "fp32")).tolist()
steps = np.arange(1, 4097)
print("last running sum:   fp16", partial16[-1], "  bf16", partial_bf16[-1], "  fp32", partial32[-1])
print("first step at which the fp16 sum stops growing:", int(np.argmax(np.diff(partial16) == 0)) + 2)
print("ulp of 2048 in fp16:", float(sf.decode(sf.ulp(sf.encode(2048.0, "fp16"), "fp16"), "fp16")))

# %%
fig, ax = plt.subplots(figsize=(7, 4), dpi=90)
ax.plot(steps, partial32, "-", color="k", label="FP32 accumulator (exact here)")
ax.plot(steps, partial16, "--", color="k", label="FP16 accumulator")
ax.plot(steps, partial_bf16, ":", color="k", lw=2, label="BF16 accumulator")
ax.annotate("stalls at 2048", xy=(3000, 2048), xytext=(2600, 2700),
            arrowprops=dict(arrowstyle="->", color="0.3"))
ax.annotate("stalls at 256", xy=(1200, 256), xytext=(1300, 900),
            arrowprops=dict(arrowstyle="->", color="0.3"))
ax.set_xlabel("number of ones added (step)")
ax.set_ylabel("running sum")
ax.set_title("Summing ones: FP16 stalls at 2048, BF16 at 256, FP32 reaches 4096")
ax.legend(loc="upper left")
fig.tight_layout()
plt.show()

# %% [markdown]
# All three lines agree up to 256, where BF16 (8 significant bits) freezes; FP16 follows the
# exact sum up to 2048 and then runs flat for the remaining 2048 steps -- the swamped count
# printed above.  The FP32 line is the true running sum.  The total is wrong by a factor of
# two, and nothing overflowed or raised an alarm: only the inexact flag knows.

# %% [markdown]
# ## 3. Dot products: error versus length
#
# A dot product of length n is a sum of n products, so it inherits the same problem.  Below,
# the inputs are FP16 values drawn uniformly from [0, 1) -- all positive, so the running sum
# grows with n and nothing cancels, the hard case for an accumulator.  Each product of two
# FP16 values is exact in float64 (22 significant bits), and `math.fsum` adds them with a
# single rounding, so the reference is the exact dot product to within 10^-16 relative,
# far below every error measured here.  The relative error |computed - exact| / exact is
# averaged over 8 random trials per length, for n = 2^4 ... 2^14 -- deliberately short, so
# that the notebook runs in seconds (`benchmarks/bench_accumulate.py` times far longer sums).
#
# The accumulators:
#
# * **IEEE** FP16, BF16, FP32: every product added into the running sum with one rounding
#   (to nearest even), either **sequentially** (one long chain) or **pairwise** (a balanced
#   tree of additions, which numpy uses for its own float sums);
# * **tensor-core models** (`accumulator="v100"`, `"a100"`, `"h100"`): the published model
#   of NVIDIA's matrix units -- blocks of 4, 8 or 16 products are aligned to the largest
#   exponent, *truncated* to 23-25 bits, added exactly, and the block result is truncated
#   into FP32 (the models are printed below; see `softfloat/accumulate/hardware.py` for the
#   sources);
# * **FP8 on the H100**: E4M3 inputs, whose native path keeps only 13 fraction bits of the
#   FP32 accumulator, and the same with `block=128`: every 128 products the partial sum is
#   handed to an ordinary FP32 addition (DeepSeek-V3's "promotion to CUDA cores").  For the
#   FP8 lines the inputs are the E4M3 roundings of the same numbers, and the reference is
#   the exact dot product of *those*, so every line measures accumulation error only.

# %%
from softfloat.accumulate import hardware_model

for chip, fmt in (("v100", sf.fp16), ("a100", sf.fp16), ("h100", sf.fp16), ("h100", sf.fp8_e4m3)):
    print(f"{chip} with {fmt} inputs:", hardware_model(chip, fmt))

# %%
LENGTHS = 2 ** np.arange(4, 15)
TRIALS = 8   # rows per call; long IEEE chains over at most 8 outputs take softfloat's fastest path
CONFIGS = {   # label: (input format, keyword arguments of sf.vecdot)
    "fp16 sequential": ("fp16", dict(accumulator="fp16")),
    "fp16 pairwise": ("fp16", dict(accumulator="fp16", order="pairwise")),
    "bf16 sequential": ("fp16", dict(accumulator="bf16")),
    "bf16 pairwise": ("fp16", dict(accumulator="bf16", order="pairwise")),
    "fp32 sequential": ("fp16", dict(accumulator="fp32")),
    "fp32 pairwise": ("fp16", dict(accumulator="fp32", order="pairwise")),
    "v100 (fp16 in)": ("fp16", dict(accumulator="v100")),
    "a100 (fp16 in)": ("fp16", dict(accumulator="a100")),
    "h100 (fp16 in)": ("fp16", dict(accumulator="h100")),
    "h100 fp8 e4m3": ("fp8_e4m3", dict(accumulator="h100")),
    "h100 fp8 e4m3, promote/128": ("fp8_e4m3", dict(accumulator="h100", block=128)),
}


def relative_errors(x, y, fmt, **kwargs):
    """Relative error of sf.vecdot on the rows of x, y (rounded into fmt) against the exact dot."""
    a, b = sf.encode(x, fmt), sf.encode(y, fmt)
    products = sf.decode(a, fmt, dtype=np.float64) * sf.decode(b, fmt, dtype=np.float64)  # exact
    exact = np.array([math.fsum(row) for row in products])
    got = sf.decode(sf.vecdot(a, b, fmt, out_format="fp32", **kwargs), "fp32", dtype=np.float64)
    return np.abs(got - exact) / exact


data_rng = np.random.default_rng(11)
errors = {label: [] for label in CONFIGS}
for n in LENGTHS:
    x, y = data_rng.random((TRIALS, n)), data_rng.random((TRIALS, n))
    for label, (fmt, kwargs) in CONFIGS.items():
        errors[label].append(relative_errors(x, y, fmt, **kwargs).mean())
errors = {label: np.array(e) for label, e in errors.items()}

print(f"mean relative error over {TRIALS} trials; columns n = 2^4 ... 2^14")
print(f"{'accumulator':28s}" + "".join(f"{n:>9d}" for n in LENGTHS))
for label, e in errors.items():
    print(f"{label:28s}" + "".join(f"{v:9.1e}" for v in e))

# %%
fig, ax = plt.subplots(figsize=(7, 4.5), dpi=90)
markers = {"fp16": "s", "bf16": "o", "fp32": "^"}
for label in ("fp16 sequential", "fp16 pairwise", "bf16 sequential", "bf16 pairwise",
              "fp32 sequential", "fp32 pairwise"):
    fmt_name, order = label.split()
    ax.loglog(LENGTHS, errors[label], "-" if order == "sequential" else "--", color="k",
              marker=markers[fmt_name], mfc="k" if order == "sequential" else "w", label=label)
ax.set_xscale("log", base=2)
ax.set_xlabel("dot product length n (terms)")
ax.set_ylabel(f"relative error (mean of {TRIALS} trials)")
ax.set_title("Sequential sums in FP16/BF16 lose most of a long dot product;\n"
             "pairwise order or an FP32 accumulator keeps the error small")
ax.legend(ncol=2, fontsize=8, loc="upper left")
fig.tight_layout()
plt.show()

# %% [markdown]
# Solid lines (filled markers) are sequential, dashed lines (open markers) pairwise.  The
# sequential BF16 and FP16 errors climb with n until the sum stalls; from then on every
# further product is lost and the error heads for 100% of the answer (BF16, with fewer
# bits, gets there first: compare the last column of the table).  Pairwise order adds numbers of
# similar size at every level of the tree, so its error hardly grows at all.  An FP32
# accumulator, with 24 bits to FP16's 11, has errors orders of magnitude lower.

# %%
fig, ax = plt.subplots(figsize=(7, 4.5), dpi=90)
hw_styles = {
    "fp32 sequential": ("-", "^", "IEEE fp32 sequential (round to nearest)"),
    "v100 (fp16 in)": ("--", "v", "V100 model, fp16 inputs"),
    "a100 (fp16 in)": ("--", "D", "A100 model, fp16 inputs"),
    "h100 (fp16 in)": ("--", "o", "H100 model, fp16 inputs"),
    "h100 fp8 e4m3": (":", "s", "H100 model, fp8 e4m3 inputs"),
    "h100 fp8 e4m3, promote/128": ("-.", "P", "H100 fp8, fp32 promotion every 128"),
}
for label, (ls, marker, text) in hw_styles.items():
    ax.loglog(LENGTHS, errors[label], ls, color="k", marker=marker, mfc="w", label=text)
guide = errors["v100 (fp16 in)"][0] * LENGTHS / LENGTHS[0]
ax.loglog(LENGTHS, guide, color="0.6", lw=3, alpha=0.5, label="slope 1: error proportional to n")
ax.set_xscale("log", base=2)
ax.set_xlabel("dot product length n (terms)")
ax.set_ylabel(f"relative error (mean of {TRIALS} trials)")
ax.set_ylim(top=10)
ax.set_title("Tensor-core truncation makes error grow with n;\n"
             "FP8 on H100 needs promotion to FP32 every 128 terms")
ax.legend(fontsize=8, loc="upper left")
fig.tight_layout()
plt.show()

# %%
slopes = {label: np.polyfit(np.log2(LENGTHS[4:]), np.log2(e[4:]), 1)[0] for label, e in errors.items()}
for label in hw_styles:
    print(f"{label:28s} log-log slope over n = 2^8 ... 2^14: {slopes[label]:5.2f}")
n_max = LENGTHS[-1]
last = {label: e[-1] for label, e in errors.items()}
print(f"\nat n = {n_max}: fp16 sequential / fp32 sequential error = "
      f"{last['fp16 sequential'] / last['fp32 sequential']:.3g}")
print(f"at n = {n_max}: h100 fp8 without / with promotion every 128 = "
      f"{last['h100 fp8 e4m3'] / last['h100 fp8 e4m3, promote/128']:.3g}")

# %% [markdown]
# The tensor-core models truncate (round toward zero) at every block, so their errors all
# point the same way and add up: the slopes printed above are close to 1, error
# proportional to n, where the round-to-nearest FP32 chain grows more slowly because its
# errors partly cancel.  The V100 model (blocks of 4, 23 bits) is the worst of the three,
# the H100 model (blocks of 16, 25 bits) the best.  FP8 inputs on the H100 go through an
# accumulator with only 13 fraction bits, and at 2^14 terms a sizeable share of the answer is
# gone; handing the partial sum to FP32 every 128 terms -- what DeepSeek-V3 did in its FP8
# training -- keeps the 13-bit error to one block's worth, and the error stops growing.

# %% [markdown]
# ## 4. Stochastic rounding cures the stalled sum -- on average
#
# Stochastic rounding rounds up with probability equal to the distance from the lower
# neighbour (in ulps), so every rounding is exact *in expectation*.  At 2048 + 1 in FP16 the
# sum now goes to 2050 half the time and stays at 2048 the other half: the expected running
# sum keeps growing by 1 per step.  `rounding="stochastic"` with a fixed `rng` makes the
# random draws reproducible.

# %%
SEED = 7
one_sum = sf.sum(ones, "fp16", accumulator="fp16", rounding="stochastic", rng=SEED)
print(f"one stochastic fp16 sum of 4096 ones (rng={SEED}): {float(sf.decode(one_sum, 'fp16'))!r}")

RUNS = 1000
many = sf.sum(np.broadcast_to(ones, (RUNS, 4096)), "fp16", axis=-1, accumulator="fp16",
              rounding="stochastic", rng=SEED)
finals = sf.decode(many, "fp16", dtype=np.float64)
mean, std = finals.mean(), finals.std(ddof=1)
stderr = std / math.sqrt(RUNS)
print(f"{RUNS} stochastic fp16 sums (rng={SEED}): mean {mean:.2f}, std {std:.2f}, "
      f"min {finals.min():.0f}, max {finals.max():.0f}")
print(f"mean - 4096 = {mean - 4096:+.2f} = {(mean - 4096) / stderr:+.2f} standard errors "
      f"(standard error {stderr:.2f}); one run's spread: std / 4096 = {std / 4096:.2%}")

with sf.context(accumulator="fp16", rounding="stochastic", rng=SEED):
    trajectories = np.cumsum(sf.Array.from_bits(np.broadcast_to(ones[:, None], (4096, 5)), "fp16"),
                             axis=0).tolist()
trajectories = np.array(trajectories)
print("five stochastic running sums end at:", trajectories[-1].tolist())

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(9, 4), dpi=90,
                                  gridspec_kw=dict(width_ratios=[3, 2]))
left.plot(steps, steps, "-", color="k", lw=1, label="exact")
left.plot(steps, partial16, "--", color="k", label="FP16, round to nearest")
for i in range(trajectories.shape[1]):
    left.plot(steps, trajectories[:, i], "-", color="0.55", lw=0.8,
              label="FP16, stochastic (5 runs)" if i == 0 else None)
left.set_xlabel("number of ones added (step)")
left.set_ylabel("running sum")
left.legend(loc="upper left", fontsize=8)
left.set_title("Running sums")
right.hist(finals, bins=np.arange(finals.min() - 8, finals.max() + 16, 16), color="0.8",
          edgecolor="k", hatch="//")
right.axvline(4096, color="k", ls="--", label="exact 4096")
right.axvline(mean, color="k", ls=":", label="mean of the runs")
right.text(0.03, 0.6, "round to nearest:\n2048, far off\nthe left edge", transform=right.transAxes,
           fontsize=8)
right.set_xlabel("final sum")
right.set_ylabel(f"count (of {RUNS} runs)")
right.legend(loc="upper left", fontsize=8)
right.set_title("Final sums, stochastic")
fig.suptitle("Stochastic rounding: the FP16 sum of 4096 ones averages 4096 instead of stalling at 2048")
fig.tight_layout()
plt.show()

# %% [markdown]
# On the left, round to nearest freezes at 2048 while each stochastic run keeps climbing
# along the exact line, wandering a little above and below it.  On the right, a thousand
# stochastic sums centre on 4096 (the mean printed above is within a few standard errors of
# it) -- but any single run is off by the spread printed above (std / 4096), which is the price:
# stochastic rounding trades a large systematic error (bias) for a small random one
# (variance).  That is why it is used for low-precision weight updates, where the errors of
# many steps average out, and why an FP32 accumulator remains the first choice when one is
# available.

# %% [markdown]
# ## Exercises
#
# 1. Repeat section 1 with `sf.tf32` and `sf.fp8_e4m3`.  Predict the ratio at which updates
#    start to vanish from `fmt.precision` before running it.
# 2. Sum 4096 ones in FP16 with `rounding="toward_zero"` and `rounding="upward"`.  Where does
#    each stall, and why does `"upward"` not stall at all until much later?
# 3. Redo the dot-product experiment with inputs drawn from a normal distribution (mean 0).
#    Why does the relative error become much noisier, and what happens when the exact dot
#    product is close to zero?
# 4. Pass `block=32` (and then `block=512`) for the FP8 H100 line.  How does the error at
#    n = 2^14 depend on the promotion interval?
# 5. Implement Kahan (compensated) summation with `sf.add` and `sf.sub` on FP16 bit patterns
#    and sum the 4096 ones again.  How close to 4096 does an FP16-only algorithm get?
# 6. Use `rounding="stochastic"` for the FP16 sequential dot products of section 3.  Does the
#    mean relative error at n = 2^14 come down to the level of pairwise summation?
