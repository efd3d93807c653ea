# %% [markdown]
# # Rounding: seven ways to pick a neighbour
#
# **What you will learn**
#
# * what each of softfloat's seven rounding modes does with a number that falls between two
#   neighbouring values of a format, drawn on a number line;
# * why ties go to the even neighbour by default, and what rounding ties away costs;
# * double rounding: a real float64 number, found by search below, that lands on a
#   different BF16 value when converted through FP32 than when converted directly -- and
#   how rounding to odd at the intermediate step makes the two-step path exact again;
# * stochastic rounding: it is right *on average*; we measure its mean and variance over
#   10^5 draws and compare them with the theory;
# * how to ask the library *why* a value rounded as it did (`sf.explain`);
# * the IEEE exception flags, and the one place where the standard lets hardware disagree:
#   whether a result that rounds up to the smallest normal number counts as underflow.
#
# Every number below is computed when the notebook runs; it takes a few seconds.

# %%
import numpy as np
import matplotlib.pyplot as plt
import softfloat as sf

MODES = [m.value for m in sf.Rounding]
print(MODES)

# %% [markdown]
# ## The modes on a number line
#
# Take FP8 E4M3, where the neighbours are far apart: between 1 and the next value, 1.125,
# there is nothing.  We round three numbers that lie a quarter, a half and three quarters of
# the way from 1 to 1.125, and the same three with a minus sign, in every mode.
#
# * `nearest_even` and `nearest_away` pick the closer neighbour; they differ only on the
#   exact tie, which the first sends to the neighbour with an even last bit and the second
#   away from zero.
# * `toward_zero` truncates; `upward` and `downward` round toward plus and minus infinity,
#   so they agree with `toward_zero` on one side of zero and with "away" on the other.
# * `odd` truncates and then, if anything was cut off, sets the last bit: the result is the
#   neighbour with an odd last bit whenever the number was not representable.
# * `stochastic` goes up with a probability equal to the distance from the lower neighbour,
#   in ulps.  We show the share of 10^4 draws that went away from zero.

# %%
fmt = sf.fp8_e4m3
lo, hi = float(sf.decode(sf.encode(1.0, fmt), fmt)), float(sf.decode(sf.next_up(sf.encode(1.0, fmt), fmt), fmt))
fractions_of_gap = [0.25, 0.5, 0.75]
inputs = [lo + f * (hi - lo) for f in fractions_of_gap]
print(f"neighbours in {fmt.name}: {lo} and {hi}; inputs {inputs} and their negatives")
results = {}
print(f"{'mode':13s}" + "".join(f"{x:>9g}" for x in inputs) + "".join(f"{-x:>9g}" for x in inputs))
for mode in MODES:
    row = []
    for x in inputs + [-x for x in inputs]:
        if mode == "stochastic":
            draws = sf.decode(sf.encode(np.full(10_000, x), fmt, mode, rng=1), fmt)
            row.append(float(np.mean(np.abs(draws) == hi)))   # share that went away from 0
        else:
            row.append(float(sf.decode(sf.encode(x, fmt, mode), fmt)))
    results[mode] = row
    cells = "".join(f"{'p=' + format(v, '.3f') if mode == 'stochastic' else format(v, 'g'):>9s}"
                    for v in row)
    print(f"{mode:13s}{cells}")

# %%
markers = ["o", "^", "s"]                                    # quarter, tie, three quarters
fig, axes = plt.subplots(1, 2, figsize=(8, 4.3), dpi=90, sharey=True)
for ax, sign in zip(axes, (-1, 1)):
    for row, mode in enumerate(MODES):
        y = len(MODES) - 1 - row
        for k, (x, marker) in enumerate(zip(inputs, markers)):
            x_signed, yk = sign * x, y + (k - 1) * 0.22
            col = k + 3 if sign < 0 else k                   # `results`: positives first
            ax.plot(x_signed, yk, marker, color="black", markerfacecolor="white", markersize=6)
            if mode == "stochastic":
                p_away = results[mode][col]
                for target, share, style in [(sign * hi, p_away, "-"), (sign * lo, 1 - p_away, ":")]:
                    ax.annotate("", (target, yk), (x_signed, yk),
                                arrowprops=dict(arrowstyle="->", linestyle=style, lw=0.8))
            else:
                ax.annotate("", (results[mode][col], yk), (x_signed, yk),
                            arrowprops=dict(arrowstyle="->", lw=1.0))
        ax.axhline(y - 0.5, color="gray", linewidth=0.4)
    for v in (lo, hi):
        ax.axvline(sign * v, color="black", linewidth=1.5)
    ax.set_xlim(*sorted((sign * (lo - 0.02), sign * (hi + 0.02))))
    ax.set_xlabel(f"value ({'negative' if sign < 0 else 'positive'} side)")
axes[0].set_yticks(range(len(MODES)), MODES[::-1])
axes[0].set_ylim(-0.6, len(MODES) - 0.4)
fig.suptitle("Only the tie separates the two nearest modes; directed modes ignore distance;\n"
             "odd always picks +-1.125.  Inputs 1/4 (circle), 1/2 (triangle), 3/4 (square) of the "
             "way;\nthick lines: E4M3 neighbours; stochastic: both arrows, solid = away from zero",
             fontsize=9)
fig.tight_layout()
plt.show()

# %% [markdown]
# What to see: read each row from the markers (the inputs) to the arrowheads (the results).
# The two nearest modes split only on the triangle (the tie); `toward_zero` always points
# inwards (toward the thick line nearer zero); `upward` points right and `downward` points
# left on both sides of zero; `odd` sends everything to 1.125 in magnitude, the neighbour
# whose last bit is 1.  The stochastic row has two arrows per input because either result
# happens; the table above prints the share of draws that went away from zero, close to
# 1/4, 1/2 and 3/4.
#
# ## Ties: why "to even"
#
# An exact tie is rare for measured data but common in arithmetic (sums of values with few
# bits, halving).  Sending every tie away from zero pushes sums of positive numbers upward;
# sending ties to the even neighbour goes up half the time and down half the time.  Above
# 2048 FP16's values are 2 apart, so every odd integer between 2049 and 4095 is a tie.
# We round all of them both ways and average the signed error.

# %%
odd_integers = np.arange(2049, 4096, 2, dtype=np.float64)
for mode in ("nearest_even", "nearest_away"):
    rounded = sf.quantize(odd_integers, "fp16", mode)
    err = rounded - odd_integers
    print(f"{mode:12s}: {odd_integers.size} ties, mean signed error {err.mean():+.3f} "
          f"(errors seen {sorted(set(err.tolist()))}); first results {rounded[:4].tolist()}")
halves = np.array([0.5, 1.5, 2.5, 3.5, -0.5, -2.5])
print("round_to_integral, nearest_even:", halves.tolist(), "->",
      sf.decode(sf.round_to_integral(sf.encode(halves, "fp16"), "fp16"), "fp16").tolist())

# %% [markdown]
# Ties to even has a mean error of zero over these ties, ties away a mean error of a full
# unit (half an FP16 ulp of 2 in every case).  `round_to_integral` shows the same rule on
# integers: 0.5 and 2.5 go down to 0 and 2, 1.5 and 3.5 up to 2 and 4 -- "banker's
# rounding", IEEE 754's default.
#
# ## Double rounding, on a real case
#
# Converting float64 to BF16 *through* FP32 rounds twice.  Usually the two roundings agree
# with one, but not always: if the first rounding lands exactly on a BF16 tie, the second
# one breaks the tie by the even rule, although the original number was not a tie at all.
# We search for such a number: 2^20 random float64 values in [1, 2), each converted directly
# and through FP32 (`sf.convert` rounds FP32 bits into BF16).

# %%
rng = np.random.default_rng(0)
x = rng.uniform(1.0, 2.0, 2**20)
direct = sf.encode(x, "bf16")                                      # one rounding
via_fp32 = sf.convert(sf.encode(x, "fp32"), "fp32", "bf16")        # two roundings
via_odd = sf.convert(sf.encode(x, "fp32", "odd"), "fp32", "bf16")  # round to odd, then nearest
bad = np.flatnonzero(direct != via_fp32)
print(f"{bad.size} of {x.size} values round differently through fp32; "
      f"through fp32 with round-to-odd: {np.count_nonzero(via_odd != direct)} differ")
x0 = float(x[bad[0]])
print(f"double-rounding example: x = {x0.hex()} = {x0!r}")
print(f"  float64 -> bf16 directly:           {hex(direct[bad[0]])} = {sf.decode(direct[bad[0]], 'bf16')}")
print(f"  float64 -> fp32 -> bf16:            {hex(via_fp32[bad[0]])} = {sf.decode(via_fp32[bad[0]], 'bf16')}")
print(f"  float64 -> fp32 (odd) -> bf16:      {hex(via_odd[bad[0]])} = {sf.decode(via_odd[bad[0]], 'bf16')}")

# %% [markdown]
# `explain` shows the two steps of the faulty path.  The first rounding (to FP32) moves x by
# a fraction of an FP32 ulp -- onto a value whose bits below BF16's last place are exactly
# `1000...0`, a BF16 tie; the second rounding then goes to the even neighbour.

# %%
x32 = sf.encode(x0, "fp32")
print(sf.explain(x0, "fp32"))
print(sf.explain(float(sf.decode(x32, "fp32")), "bf16"))
print(sf.explain(x0, "bf16"))

# %%
below = float(sf.decode(sf.encode(x0, "bf16", "toward_zero"), "bf16"))
ulp16 = float(sf.decode(sf.ulp(sf.encode(x0, "bf16", "toward_zero"), "bf16"), "bf16"))
ulp32 = float(sf.decode(sf.ulp(x32, "fp32"), "fp32"))
mid = below + ulp16 / 2
to_u16 = lambda v: (v - below) / ulp16                              # position in bf16 ulps
to_u32 = lambda v: (v - mid) / ulp32                                # offset from the tie, fp32 ulps
x32v, x_odd = float(sf.decode(x32, "fp32")), float(sf.decode(sf.encode(x0, "fp32", "odd"), "fp32"))
fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.4), dpi=90)
for v, label, side in [(below, "bf16 below ", "right"), (below + ulp16, " bf16 above", "left")]:
    left.axvline(to_u16(v), color="black", linewidth=2)
    left.annotate(label, (to_u16(v), 0.9), ha=side, fontsize=8)
left.axvline(0.5, color="black", linestyle=":", linewidth=1)
left.plot(to_u16(x0), 0.5, "o", color="black", markerfacecolor="white", label="x (float64)")
left.set_xlim(-0.2, 1.2)
left.set_ylim(0, 1)
left.set_yticks([])
left.set_xlabel("position between the bf16 neighbours (bf16 ulps)")
left.set_title("at this scale x sits on the tie (dotted)", fontsize=9)
left.legend(fontsize=8, loc="lower left")
for k in range(-2, 3):
    right.axvline(k, color="gray", linewidth=0.8)                 # the fp32 grid
right.axvline(0, color="black", linestyle=":", linewidth=1.5)
right.plot(to_u32(x0), 0.7, "o", color="black", markerfacecolor="white", label="x (float64)")
right.annotate("", (to_u32(x32v), 0.5), (to_u32(x0), 0.7),
               arrowprops=dict(arrowstyle="->", lw=1.2))
right.plot(to_u32(x32v), 0.5, "s", color="black", label="fp32 nearest: the tie")
right.annotate("", (to_u32(x_odd), 0.3), (to_u32(x0), 0.7),
               arrowprops=dict(arrowstyle="->", lw=1.2, linestyle="--"))
right.plot(to_u32(x_odd), 0.3, "^", color="black", label="fp32 odd: off the tie")
right.set_xlim(-2.5, 2.5)
right.set_ylim(0, 1)
right.set_yticks([])
right.set_xlabel("offset from the bf16 tie (fp32 ulps; grey = fp32 values)")
right.set_title("zoomed in: nearest lands on the tie, odd does not", fontsize=9)
right.legend(fontsize=7, loc="lower right")
fig.suptitle("Double rounding: fp32 nearest turns x into an exact bf16 tie, "
             "and ties-to-even then rounds the wrong way", fontsize=10)
fig.tight_layout()
plt.show()
print(f"x is {to_u32(x0):+.4f} fp32 ulps from the bf16 tie; fp32 nearest gives "
      f"{to_u32(x32v):+.0f}, fp32 odd gives {to_u32(x_odd):+.0f}")

# %% [markdown]
# What to see: x lies just above the BF16 midpoint (the printed offset is a fraction of an
# FP32 ulp), so one rounding sends it up.  Rounding to nearest in FP32 snaps it onto the
# midpoint itself (square), and the second rounding sees an exact tie and goes to the even
# neighbour -- down.  Rounding to odd (triangle) never lands on a value with an even last
# bit unless x was exact, so it cannot create a tie: it keeps "which side of the midpoint"
# in the last bit, and the second rounding gets it right.  Boldo and Melquiond proved this
# works whenever the intermediate format has at least two more bits than the final one
# (FP32 has 24, BF16 8); the count of zero differences over all the sampled values above
# confirms it here.
#
# Is this only a textbook worry?  A cast that goes through FP32 on the way makes exactly
# this mistake.  If ml_dtypes is installed, we check what its float64 -> bfloat16 cast does
# with x.

# %%
try:
    import ml_dtypes
except ImportError:
    print("ml_dtypes is not installed: pip install ml_dtypes to run this check")
else:
    theirs = int(np.array([x0]).astype(ml_dtypes.bfloat16).view(np.uint16)[0])
    verdict = ("the double-rounded result" if theirs == via_fp32[bad[0]] and theirs != direct[bad[0]]
               else "the correctly rounded result" if theirs == direct[bad[0]] else "neither")
    print(f"ml_dtypes {ml_dtypes.__version__}: float64 -> bfloat16 gives {hex(theirs)}: {verdict}")

# %% [markdown]
# ## Stochastic rounding: right on average
#
# Stochastic rounding replaces a deterministic error by a random one with mean zero.  If x
# lies a fraction p of an ulp above its lower neighbour, it rounds up with probability p, so
# the expected result is lo + p * ulp = x, and the variance of the result is p(1 - p) ulp^2
# (a Bernoulli variable scaled by the ulp).  We round one BF16 value 10^5 times
# (`rng=` makes it reproducible) and compare.

# %%
fmt = sf.bf16
x_sr = 1.0 + 0.3 * 2.0**-7
lo_b = sf.encode(x_sr, fmt, "toward_zero")
lo_sr = float(sf.decode(lo_b, fmt))
ulp_sr = float(sf.decode(sf.ulp(lo_b, fmt), fmt))
p = (x_sr - lo_sr) / ulp_sr                        # exact: Sterbenz, then a power of two
n = 100_000
draws = sf.decode(sf.encode(np.full(n, x_sr), fmt, "stochastic", rng=2024), fmt)
mean, var = draws.mean(), draws.var()
theory_var = p * (1 - p) * ulp_sr**2
stderr = np.sqrt(theory_var / n)
nearest = float(sf.quantize(x_sr, fmt))
print(f"x = {x_sr!r}, neighbours {lo_sr} and {lo_sr + ulp_sr}, p = {p:.6f}")
print(f"share rounded up: {np.mean(draws > x_sr):.5f} (theory p = {p:.5f})")
print(f"empirical mean {mean:.9f}, x = {x_sr:.9f}: off by {(mean - x_sr) / stderr:+.2f} standard errors")
print(f"empirical variance {var / ulp_sr**2:.5f} ulp^2, theory p(1-p) = {p * (1 - p):.5f} ulp^2")
print(f"nearest_even gives {nearest} every time: a bias of {(nearest - x_sr) / ulp_sr:+.3f} ulp")

# %%
fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.6), dpi=90)
values, counts = np.unique(draws, return_counts=True)
left.bar([0, 1], counts, width=0.5, color="white", edgecolor="black", hatch="//")
left.set_xticks([0, 1], [f"{v:g}\n(lower)" if v < x_sr else f"{v:g}\n(upper)" for v in values])
left.axhline(n * p, color="black", linestyle="--", linewidth=1, label="n p, n (1 - p)")
left.axhline(n * (1 - p), color="black", linestyle="--", linewidth=1)
left.set_ylabel(f"draws (of {n})")
left.set_xlabel("bf16 result")
left.set_title("10^5 draws of one value", fontsize=9)
left.legend(fontsize=8)
running = np.cumsum(draws) / np.arange(1, n + 1)
steps = np.unique(np.geomspace(1, n, 300).astype(int))
right.plot(steps, (running[steps - 1] - x_sr) / ulp_sr, "-", color="black", label="running mean - x")
band = 2 * np.sqrt(p * (1 - p) / steps)
right.plot(steps, band, ":", color="black", label="+-2 standard errors")
right.plot(steps, -band, ":", color="black")
right.axhline((nearest - x_sr) / ulp_sr, color="black", linestyle="--", label="nearest_even's bias")
right.set_xscale("log")
right.set_xlabel("number of draws averaged")
right.set_ylabel("error of the mean (bf16 ulps)")
right.set_title("the mean converges to x", fontsize=9)
right.legend(fontsize=7, loc="lower right")
fig.suptitle("Stochastic rounding: each draw errs by up to an ulp, the average does not", fontsize=10)
fig.tight_layout()
plt.show()

# %% [markdown]
# What to see: on the left, the draws split between the two neighbours in proportions p and
# 1 - p (dashed lines).  On the right, the error of the running mean shrinks like
# 1/sqrt(n), inside the dotted two-standard-error band, while rounding to nearest stays off
# by a fixed share of an ulp (dashed) however many values are averaged.  That fixed bias is
# what stalls long low-precision sums and tiny weight updates; notebook 04 shows the
# consequence.
#
# ## Asking why: `sf.explain`
#
# `explain` prints the exact input, the two neighbours, the guard, round and sticky bits,
# the decision and the flags.  Here is BF16's first tie above 1, 1 + 2^-8, in the two
# nearest modes, and 0.1 rounded to odd in FP8 E4M3.

# %%
tie = 1 + 2.0**-8
print(sf.explain(tie, "bf16", "nearest_even"))
print(sf.explain(tie, "bf16", "nearest_away"))
print(sf.explain("0.1", "fp8_e4m3", "odd"))

# %% [markdown]
# ## The IEEE flags, and tininess before or after rounding
#
# IEEE 754 raises five exception flags: invalid, division by zero, overflow, underflow and
# inexact.  Conversion can raise the last three (and invalid, for signalling NaNs).  Note
# that underflow needs *two* things: the result is tiny (below the smallest normal) and it
# is inexact -- a subnormal that is stored exactly raises nothing.

# %%
samples = {"1.0": 1.0, "0.1": 0.1, "1e-8 (too small)": 1e-8, "2^-24 (exact subnormal)": 2.0**-24,
           "70000 (too large)": 70000.0}
for label, value in samples.items():
    b, f = sf.encode(value, "fp16", return_flags=True)
    print(f"{label:26s} -> {float(sf.decode(b, 'fp16')):<12.6g} flags {f.raised()}")

# %% [markdown]
# The standard lets an implementation decide *when* a result is tiny: before rounding (the
# exact value is below the smallest normal; ARM) or after rounding (the value rounded to the
# format's precision with an unlimited exponent range is below it; x86 SSE and RISC-V).
# They disagree only on numbers just below the smallest normal that round *up* to it.  We
# search for them: values below FP16's smallest normal 2^-14, a little further below each
# time, converted under both rules.

# %%
fmt = sf.fp16
steps_below = np.arange(1, 2049)
candidates = fmt.min_normal * (1 - steps_below * 2.0**-18)
_, after = sf.encode(candidates, fmt, tininess="after", return_flags=True)
_, before = sf.encode(candidates, fmt, tininess="before", return_flags=True)
differ = np.flatnonzero(after.underflow != before.underflow)
window = fmt.min_normal - candidates[differ].min()
print(f"{differ.size} of {candidates.size} candidates below 2^-14 disagree, from "
      f"{float(candidates[differ].max())!r} down to {float(candidates[differ].min())!r}: "
      f"a window {window / fmt.min_subnormal:g} of a subnormal spacing wide, all of it contiguous: "
      f"{bool(np.all(np.diff(differ) == 1) and differ[0] == 0)}")
x_t = float(candidates[differ[-1]])
for tininess in ("before", "after"):
    b, f = sf.encode(x_t, fmt, tininess=tininess, return_flags=True)
    print(f"tininess={tininess:6s}: {x_t!r} -> {hex(b)} = {float(sf.decode(b, fmt))!r}, flags {f.raised()}")
for mode in ("toward_zero", "upward"):
    row = []
    for tininess in ("before", "after"):
        b, f = sf.encode(x_t, fmt, mode, tininess=tininess, return_flags=True)
        row.append(f"{tininess}: {hex(b)} {f.raised()}")
    print(f"{mode:12s} " + "; ".join(row))

# %% [markdown]
# The disagreeing values form one narrow window directly below 2^-14 (the printed range).
# The test "after rounding" rounds to FP16's 11 significant bits *as if the exponent could
# go lower*; just below 2^-14 that grid is twice as fine as the subnormal spacing, and only
# the values within half of *its* spacing from 2^-14 still round to 2^-14 on it -- hence
# the printed width.  Before rounding they are tiny, so ARM raises underflow; after
# rounding they are a normal number, so x86 does not.  In `toward_zero` the same value rounds down to a subnormal and
# both rules agree on underflow; in `upward` it rounds up to the normal and they disagree
# again.  softfloat follows x86 by default (`tininess="after"`); pass `tininess="before"`
# to reproduce ARM.
#
# ## Exercises
#
# 1. Redraw the number-line figure for the interval between -0.015625 and the next value
#    down in E4M3 (a subnormal interval).  Does any mode behave differently there?
# 2. Search for double rounding from float64 through FP16 to FP8 E4M3.  FP16 has 11
#    significant bits and E4M3 4: does rounding to odd at the FP16 step still fix every
#    case?  What about float64 -> BF16 -> E4M3 (8 bits against 4)?
# 3. Repeat the stochastic experiment with p close to 0 (say x = 1 + 2^-12 in BF16).  How
#    many draws do you need before the mean is within 10% of x - 1?  Compare with
#    p(1 - p)/n.
# 4. Sum 4096 copies of 1 + 2^-9 in BF16 with rounding to nearest and with stochastic
#    rounding (`sf.sum(..., rounding="stochastic", rng=0)`).  Which is closer to the exact
#    sum, and why?
# 5. Find the window of disagreement between the two tininess rules for BF16 and for FP8
#    E4M3.  How wide is it, in units of the smallest subnormal?
