# %% [markdown]
# # IEEE 754 anatomy, bit by bit
#
# **What you will learn**
#
# * how a binary floating-point number is stored: a sign, a biased exponent and a fraction,
#   shown bit by bit on the two worked examples every introduction uses, 0.875 and 6.36;
# * how the formats of mixed-precision training (FP32, TF32, FP16, BF16, FP8, FP6, FP4)
#   differ, with every limit computed from two widths and a special-value policy;
# * where the representable values of an 8-bit format actually lie, how the gap between
#   neighbours grows with magnitude (and stops growing in the subnormal range), and what
#   that means for the relative error of rounding a number into each format;
# * the two effects that make FP16 training fragile: swamping and underflow.
#
# Everything printed below is computed by softfloat when the notebook runs; nothing is typed
# in by hand.  The notebook runs in a few seconds.

# %%
import numpy as np
import matplotlib.pyplot as plt
import softfloat as sf

# %% [markdown]
# ## 0.875 = 0.111 (binary) = 1.11 x 2^-1
#
# The sign is 0, the exponent -1 is stored with FP32's bias of 127 as 126 = 01111110, and
# the fraction keeps the bits after the leading 1: 11 followed by zeros.  0.875 is a sum of
# three powers of two, so it is stored exactly.

# %%
print(sf.explain(0.875, sf.fp32))

# %% [markdown]
# ## 6.36 is not a binary fraction
#
# 6.36 = 110.01011100001010001111010111... (binary) never terminates, so FP32 keeps 24
# significant bits and rounds.  `explain` reads the string "6.36" exactly (it never goes
# through float64), shows both neighbours, the guard/round/sticky bits and why the upper
# neighbour won.

# %%
print(sf.explain("6.36", sf.fp32))

# %% [markdown]
# ## The formats of mixed-precision training
#
# A format is declared by its exponent width, its fraction width and where it keeps its
# special values; softfloat derives the rest.  The table is built from the library's
# catalogue (`sf.catalogue()`), so it cannot drift from what `encode` actually does.
# Read it by columns: FP16 has the precision but not the range; BF16 and TF32 keep FP32's
# exponent (and so its range) with fewer fraction bits; FP8 E4M3 spends a bit on precision,
# E5M2 on range; FP6 and FP4 have no infinity and no NaN at all.

# %%
TABLE = [f for f in sf.catalogue()
         if f.name in ("fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2",
                       "fp6_e3m2", "fp6_e2m3", "fp4_e2m1")]
print(f"{'format':10s} {'bits':>4s} {'e':>2s} {'m':>3s} {'bias':>4s} {'max finite':>12s} "
      f"{'min normal':>11s} {'min subnormal':>13s} {'epsilon':>10s}  inf  NaN")
for f in TABLE:
    print(f"{f.name:10s} {f.bits:4d} {f.exponent_bits:2d} {f.mantissa_bits:3d} {f.bias:4d} "
          f"{f.max_finite:12.6g} {f.min_normal:11.4g} {f.min_subnormal:13.4g} {f.epsilon:10.4g}"
          f"  {'yes' if f.has_infinity else 'no ':3s}  {'yes' if f.has_nan else 'no'}")

# %% [markdown]
# ## Every value of an 8-bit format
#
# An 8-bit format has only 256 bit patterns, so we can decode every one of them and look.
# Below, each positive finite value of FP8 E4M3 and E5M2 is a tick on a logarithmic axis
# (the negative values mirror them).  Vertical bars are normal numbers, open markers the
# subnormals, which fill the gap between zero and the smallest normal with evenly spaced
# values.

# %%
def positive_values(fmt):
    """Every positive finite value of an 8-bit format, and which of them are subnormal."""
    bits = np.arange(256)
    values = sf.decode(bits, fmt)
    keep = np.isfinite(values) & (values > 0)
    return values[keep], sf.is_subnormal(bits, fmt)[keep]


fig, ax = plt.subplots(figsize=(7, 3.2), dpi=90)
summary = {}
for row, (fmt, marker) in enumerate([(sf.fp8_e5m2, "s"), (sf.fp8_e4m3, "o")]):
    values, subnormal = positive_values(fmt)
    summary[fmt.name] = (values.size, subnormal.sum(), values.min(), values.max())
    ax.plot(values[~subnormal], np.full((~subnormal).sum(), row), "|", color="black",
            markersize=12, linestyle="none", label="normal" if row == 0 else "_nolegend_")
    ax.plot(values[subnormal], np.full(subnormal.sum(), row), marker, color="black",
            markerfacecolor="white", markersize=6, linestyle="none",
            label=f"{fmt.name} subnormal")
    ax.annotate(f"max {values.max():g}", (values.max(), row), textcoords="offset points",
                xytext=(-10, 8), fontsize=8)
ax.set_xscale("log", base=2)
ax.set_yticks([0, 1], ["E5M2", "E4M3"])
ax.set_ylim(-0.7, 1.9)
ax.set_xlabel("value (log scale, base 2; dimensionless)")
ax.set_title(f"E4M3: {summary['fp8_e4m3'][0]} positive values up to {summary['fp8_e4m3'][3]:g}; "
             f"E5M2: {summary['fp8_e5m2'][0]} up to {summary['fp8_e5m2'][3]:g}", fontsize=10)
ax.legend(fontsize=7, ncol=3, loc="upper left")
ax.grid(axis="x", alpha=0.3)
plt.show()
for fmt in (sf.fp8_e4m3, sf.fp8_e5m2):
    values, subnormal = positive_values(fmt)
    per_binade = np.sum((values >= 1) & (values < 2))
    print(f"{fmt.name}: {values.size} positive finite values, {subnormal.sum()} of them "
          f"subnormal, {per_binade} per binade, smallest {values.min():g} = "
          f"2^{np.log2(values.min()):.0f}, largest {values.max():g}")

# %% [markdown]
# What to see: on a log axis the normal values of each format are evenly spread within
# every power of two, with 2^m of them per binade for m fraction bits (printed above), and
# E5M2's ticks reach much further in both directions than E4M3's.  The open markers at the
# left end are the subnormals: on a log axis they crowd together towards the smallest
# normal, because they are evenly spaced on a linear one.
#
# ## The gap between neighbours grows with the number
#
# The unit in the last place, ulp(x), is the gap from x to the next representable value.
# Within a binade [2^e, 2^(e+1)) it is constant, 2^(e - m) for m fraction bits, so on
# log-log axes it climbs as a staircase of slope 1.  Below the smallest normal the exponent
# cannot shrink any further, so the gap stays at the smallest subnormal: the flat ramp at
# the left.  At the right the staircase ends at the largest finite value: beyond it lies
# only infinity, the overflow cliff.  We sample magnitudes densely, round them down into
# each format (so that nothing overflows) and ask the library for `sf.ulp` of the result.

# %%
# readme-figure: ulp-gaps
def gaps(fmt, magnitudes):
    """ulp(x) for the magnitudes between fmt's smallest subnormal and its largest value."""
    inside = magnitudes[(magnitudes >= fmt.min_subnormal) & (magnitudes <= fmt.max_finite)]
    bits = sf.encode(inside, fmt, rounding="toward_zero")
    return inside, sf.decode(sf.ulp(bits, fmt), fmt)


STYLES = [(sf.fp32, "-"), (sf.bf16, "--"), (sf.fp16, ":")]
PANELS = [  # (binades shown, formats drawn, x ticks as powers of two)
    ((-152, 129), STYLES[:2], [-126, -64, 0, 64, 128]),
    ((-27, 18), STYLES, [-24, -14, 0, 16]),
]
fig, axes = plt.subplots(1, 2, figsize=(8, 3.8), dpi=90)
for ax, ((lo, hi), drawn, ticks) in zip(axes, PANELS):
    magnitudes = 2.0 ** np.linspace(lo, hi, 4000)
    for fmt, style in drawn:
        x, gap = gaps(fmt, magnitudes)
        ax.step(x, gap, style, where="post", color="black", linewidth=1.6,
                label=f"{fmt.name} (m={fmt.mantissa_bits})")
        if fmt.max_finite <= magnitudes[-1]:           # the cliff: nothing finite beyond
            ax.plot([fmt.max_finite] * 2, [gap[-1], gap.min()], style, color="black",
                    linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xticks([2.0**k for k in ticks], [f"$2^{{{k}}}$" for k in ticks])
    ax.set_xlabel("magnitude |x| (log scale, base 2)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
axes[0].set_ylabel("gap to the next value, ulp(x)")
axes[0].set_title("FP32 and BF16, whole range", fontsize=9)
axes[1].set_title("zoom on FP16's range", fontsize=9)
fig.suptitle("The gap doubles every binade, stays flat below the smallest normal,\n"
             "and the staircase stops dead at the largest finite value", fontsize=10)
fig.tight_layout()
plt.show()
for fmt, _ in STYLES:
    x, gap = gaps(fmt, 2.0 ** np.linspace(-152, 129, 4000))
    flat = gap[x < fmt.min_normal]
    print(f"{fmt.name}: gap {gap.min():.4g} (= min subnormal {fmt.min_subnormal:.4g}) everywhere "
          f"below min normal {fmt.min_normal:.4g} ({np.unique(flat).size} distinct value); "
          f"gap {gap.max():.4g} just below max finite {fmt.max_finite:.6g}")
g = {fmt.name: float(sf.decode(sf.ulp(sf.encode(1.0, fmt), fmt), fmt)) for fmt, _ in STYLES}
print(f"gap at 1.0: fp32 {g['fp32']:.4g}, bf16 {g['bf16']:.4g}, fp16 {g['fp16']:.4g}; "
      f"bf16/fp32 = 2^{np.log2(g['bf16'] / g['fp32']):.0f}, bf16/fp16 = 2^{np.log2(g['bf16'] / g['fp16']):.0f}")

# %% [markdown]
# What to see: on the left, BF16's staircase (dashed) spans the same magnitudes as FP32's
# (solid) but sits higher by the ratio printed above -- the same range, fewer fraction bits.
# Both are flat at the far left (the subnormal ramp: the gap cannot shrink below the
# smallest subnormal) and stop at a vertical cliff at the right.  The zoom on the right
# shows the steps themselves and FP16 (dotted): parallel to BF16 but lower (more fraction
# bits), with its flat ramp and its cliff inside a range that FP32 and BF16 cross without
# noticing.  The x ticks at 2^-126 and 2^-14 mark the smallest normal of FP32 (and BF16)
# and of FP16.
# The printed lines give each format's flat gap and its last gap before the cliff.
#
# ## Relative error of rounding, across the range
#
# What matters for a computation is the gap relative to the number: rounding to nearest
# moves x by at most half an ulp, so the relative error |quantize(x) - x| / |x| stays below
# the unit roundoff 2^-(m+1) throughout the normal range -- whatever the magnitude.  In the
# subnormal range the gap stops shrinking while x keeps shrinking, so the relative error
# grows until it reaches 1 (x rounds to zero).  Past the largest finite value the result is
# infinity (or NaN for E4M3) and the error is unbounded; the curves stop there.  We draw
# 20000 random magnitudes (uniform in log scale between 2^-30 and 2^20) and plot, per
# binade, the largest relative error found.

# %%
rng = np.random.default_rng(0)
lo, hi = -30, 20
xs = 2.0 ** rng.uniform(lo, hi, 20000)
bins = np.arange(lo, hi + 1)
centres = 2.0 ** ((bins[1:] + bins[:-1]) / 2)
which = np.clip(np.digitize(np.log2(xs), bins) - 1, 0, centres.size - 1)
fig, ax = plt.subplots(figsize=(7, 4), dpi=90)
worst_normal = {}
for fmt, style, marker in [(sf.fp16, "-", None), (sf.bf16, "--", None),
                           (sf.fp8_e4m3, "-", "o"), (sf.fp8_e5m2, ":", "s")]:
    q = sf.quantize(xs, fmt)
    finite = np.isfinite(q)                        # inf or NaN where x overflowed
    rel = np.abs(q[finite] - xs[finite]) / xs[finite]
    per_bin = np.full(centres.size, -np.inf)
    np.maximum.at(per_bin, which[finite], rel)
    per_bin[per_bin < 0] = np.nan                  # bins past the cliff: no finite result
    ax.plot(centres, per_bin, style, marker=marker, markevery=3, markersize=4,
            color="black", linewidth=1.2, label=fmt.name)
    normal = xs[finite] >= fmt.min_normal
    worst_normal[fmt.name] = (rel[normal].max(), 2.0 ** -(fmt.mantissa_bits + 1),
                              (~finite).sum(), (q == 0).sum())
ax.set_xscale("log", base=2)
ax.set_yscale("log", base=2)
ax.set_xlabel("magnitude |x| (log scale, base 2)")
ax.set_ylabel("largest relative error |q(x) - x| / |x|")
ax.set_title("Relative error is flat (the unit roundoff) over the normal range,\n"
             "climbs to 1 through the subnormals, and ends at overflow", fontsize=10)
ax.legend(fontsize=8, loc="center right")
ax.grid(alpha=0.3)
plt.show()
for name, (worst, bound, over, zero) in worst_normal.items():
    print(f"{name}: largest relative error in the normal range {worst:.4g} "
          f"<= unit roundoff 2^{np.log2(bound):.0f} = {bound:.4g}; "
          f"{over} of {xs.size} overflowed, {zero} became zero")

# %% [markdown]
# What to see: each curve has a flat floor at its format's unit roundoff -- BF16's (dashed)
# above FP16's (solid), the FP8 floors far above both: fewer fraction bits, a higher floor.
# At the left, in the subnormal range, the FP16 and FP8 curves rise to 1, where values
# underflow to zero (BF16's subnormals lie far off this plot, near 2^-126).  At the right the
# FP16 and FP8 curves end at their largest finite value; BF16 runs on.  The printed lines
# check that the worst normal-range error never exceeds the unit roundoff and count the
# samples that overflowed or became zero.
#
# ## Swamping: 2048 + 1 = 2048 in FP16
#
# Above 2048 the spacing of FP16 values is 2, so adding 1 lands exactly halfway and rounds
# back to the even neighbour.  An update 2048 times smaller than a weight is lost the same
# way -- which is why mixed-precision training keeps FP32 master weights.

# %%
one, big = sf.encode(1.0, "fp16"), sf.encode(2048.0, "fp16")
print(sf.decode(sf.add(big, one, "fp16"), "fp16"))                       # 2048.0
w, dw = sf.encode(1.0, "fp16"), sf.encode(2.0**-11, "fp16")
print(sf.decode(sf.add(w, dw, "fp16"), "fp16"),                          # 1.0: the update is lost
      sf.decode(sf.add(sf.encode(1.0, "fp32"), sf.encode(2.0**-11, "fp32"), "fp32"), "fp32"))

# %% [markdown]
# ## Underflow: small gradients vanish in FP16
#
# Products of small gradients fall below FP16's smallest subnormal (2^-24) and flush to
# zero; loss scaling multiplies the loss (and so every gradient) by a large factor to keep
# them representable.

# %%
grads = np.float32([2e-4, 5e-5, 1e-6, 1e-8])
bits, flags = sf.encode(grads, "fp16", return_flags=True)
print(sf.decode(bits, "fp16"))
print(flags.summary())
scaled, scaled_flags = sf.encode(grads * 1024, "fp16", return_flags=True)
print(sf.decode(scaled, "fp16") / 1024)
print(scaled_flags.summary())

# %% [markdown]
# ## Exercises
#
# 1. Decode 0.1 in FP16, BF16 and FP8 E4M3 with `sf.explain("0.1", fmt)`.  Which format
#    errs most, in ulps and relatively?  Does the answer match the relative-error figure?
# 2. Add FP6 E3M2, FP6 E2M3 and FP4 E2M1 to the number-line figure (64 and 16 patterns).
#    Which of them has subnormals, and how many values per binade?
# 3. TF32 has FP32's exponent and FP16's fraction.  Predict where its curve lies in the
#    ulp figure, then add it and check.
# 4. Build a custom format with `sf.Format(exponent_bits=6, mantissa_bits=9)`.  Where are its
#    ramp and cliff?  Which known format does its staircase run parallel to?
# 5. Repeat the relative-error figure with `rounding="toward_zero"`.  By how much does the
#    flat floor rise, and why?
