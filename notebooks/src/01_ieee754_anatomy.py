# %% [markdown]
# # IEEE 754 anatomy, bit by bit
#
# A floating-point number is three fields: a sign, a biased exponent and a fraction.  This
# notebook takes the two worked examples every introduction uses -- 0.875 and 6.36 in FP32 --
# and lets softfloat show every bit, then compares the formats mixed-precision training
# uses, and ends with the two effects that make FP16 training fragile: swamping and
# underflow.

# %%
import numpy as np
import softfloat as sf

# %% [markdown]
# ## 0.875 = 0.111 (binary) = 1.11 x 2^-1
#
# The sign is 0, the exponent -1 is stored with FP32's bias of 127 as 126 = 01111110, and
# the fraction keeps the bits after the leading 1: 11 followed by zeros.

# %%
print(sf.explain(0.875, sf.fp32))

# %% [markdown]
# ## 6.36 is not a binary fraction
#
# 6.36 = 110.01011100001010001111010111... (binary) never terminates, so FP32 keeps 24
# significant bits and rounds.  `explain` shows both neighbours, the guard/round/sticky bits
# and why the upper neighbour won.

# %%
print(sf.explain("6.36", sf.fp32))

# %% [markdown]
# ## The formats of mixed-precision training
#
# FP16 has the precision but not the range; BF16 keeps FP32's range with 8 bits of
# precision; FP8 trades both.  Every column below is derived from exponent and mantissa
# widths.

# %%
for f in (sf.fp32, sf.tf32, sf.fp16, sf.bf16, sf.fp8_e4m3, sf.fp8_e5m2):
    print(f"{f.name:10s} e{f.exponent_bits} m{f.mantissa_bits:<3d} max {f.max_finite:<12.6g} "
          f"min normal {f.min_normal:<11.4g} min subnormal {f.min_subnormal:<11.4g} eps {f.epsilon:.4g}")

# %% [markdown]
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
