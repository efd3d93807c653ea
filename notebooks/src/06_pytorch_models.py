# %% [markdown]
# # A PyTorch model in emulated precision
#
# `softfloat.torch.emulate(recipe)` runs an unchanged PyTorch model with every matrix
# product -- forward, and the two products of each backward step -- computed bit for bit
# as a mixed-precision recipe says: the operands rounded (and scaled) into BF16, FP8 or
# FP4, the products summed in the recipe's accumulator (IEEE FP32, or a model of a tensor
# core), the results rounded into the recipe's output format.  The tensors stay float32;
# they hold values of the emulated formats.  Nothing here needs a GPU.
#
# **What you will learn**
#
# - how to train a small transformer under the named recipes (`fp32`, `bf16`, `fp16` with
#   `torch.amp.GradScaler`, `fp8`, `fp8-current`, `fp8-block`, `mxfp8`) and compare the
#   loss curves;
# - why FP8 needs its scales: without them, the gradients of a mean loss over a thousand
#   tokens all underflow to zero in E4M3;
# - how to read the per-layer telemetry (`em.report()`): what underflowed, what
#   saturated, which scale each operand got;
# - what a tensor core's accumulator changes (the `"h100"` model), and what promoting
#   the partial sums into FP32 every 128 products (DeepSeek-V3's recipe) buys back.
#
# The model is a 1-layer, 32-wide GPT written in the style of Karpathy's minGPT /
# nanoGPT, trained on two of Shakespeare's sonnets, one character per token.  The runs
# are kept short (a few steps, so that the notebook executes in well under a minute on a
# CPU); more steps show more.

# %%
import contextlib
import math

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import softfloat.torch as sft
from softfloat.recipes import as_recipe

plt.rcParams.update({"figure.dpi": 90, "figure.figsize": (7, 4), "axes.grid": True, "grid.color": "0.9"})
THREADS = torch.get_num_threads()
torch.set_num_threads(1)   # a tiny model: torch's thread pool costs more than it saves (restored at the end)

TEXT = """\
Shall I compare thee to a summer's day?
Thou art more lovely and more temperate:
Rough winds do shake the darling buds of May,
And summer's lease hath all too short a date;
Sometime too hot the eye of heaven shines,
And often is his gold complexion dimm'd;
And every fair from fair sometime declines,
By chance or nature's changing course untrimm'd;
But thy eternal summer shall not fade,
Nor lose possession of that fair thou ow'st;
Nor shall death brag thou wander'st in his shade,
When in eternal lines to time thou grow'st:
So long as men can breathe or eyes can see,
So long lives this, and this gives life to thee.
When, in disgrace with fortune and men's eyes,
I all alone beweep my outcast state,
And trouble deaf heaven with my bootless cries,
And look upon myself and curse my fate,
Wishing me like to one more rich in hope,
Featured like him, like him with friends possess'd,
Desiring this man's art and that man's scope,
With what I most enjoy contented least;
Yet in these thoughts myself almost despising,
Haply I think on thee, and then my state,
Like to the lark at break of day arising
From sullen earth, sings hymns at heaven's gate;
For thy sweet love remember'd such wealth brings
That then I scorn to change my state with kings.
"""
CHARS = sorted(set(TEXT))
DATA = torch.tensor([CHARS.index(c) for c in TEXT])
print(f"corpus: {len(TEXT)} characters, vocabulary of {len(CHARS)}")

# %% [markdown]
# The model: token and position embeddings, pre-LayerNorm blocks of causal
# self-attention and a GELU MLP, a final LayerNorm and an output head tied to the token
# embedding.  The attention is written out (`q @ k^T`, mask, softmax, `@ v`), so every
# product is an `F.linear` or a `torch.matmul` -- exactly what `emulate` intercepts.

# %%
class Attention(nn.Module):
    def __init__(self, d, heads, context):
        super().__init__()
        self.heads, self.c_attn, self.c_proj = heads, nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.register_buffer("causal", torch.tril(torch.ones(context, context, dtype=torch.bool)))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = (t.view(B, T, self.heads, -1).transpose(1, 2) for t in self.c_attn(x).split(C, dim=2))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = F.softmax(att.masked_fill(~self.causal[:T, :T], float("-inf")), dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).reshape(B, T, C))


class Block(nn.Module):
    def __init__(self, d, heads, context):
        super().__init__()
        self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(d), Attention(d, heads, context), nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab=len(CHARS), context=64, layers=1, heads=2, d=32):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.h = nn.ModuleList(Block(d, heads, context) for _ in range(layers))
        self.ln_f, self.lm_head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight                       # tied
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def batches(seed, size, context):
    """Random windows of the corpus and the characters that follow them."""
    gen = torch.Generator().manual_seed(seed)
    while True:
        start = torch.randint(len(DATA) - context - 1, (size,), generator=gen)
        yield (torch.stack([DATA[i:i + context] for i in start]),
               torch.stack([DATA[i + 1:i + context + 1] for i in start]))


# %% [markdown]
# ## 1. One model, seven recipes
#
# Each run starts from the same weights and sees the same batches; the optimizer is
# torch's own AdamW in float32, the gradient norm clipped at 1 as nanoGPT does.  The whole loop runs inside one `emulate` block, so the
# delayed scaling of `fp8` keeps its amax history from step to step, as Transformer
# Engine does.  The `fp16` recipe asks for dynamic loss scaling (`loss_scale` is
# `"dynamic"`), so its run uses `torch.amp.GradScaler`, which sees the infinities of
# overflowing FP16 gradients and skips those steps.  The loss is measured on a fixed
# held-out batch, under the same recipe.

# %%
STEPS, BATCH, CONTEXT, LR = 20, 4, 16, 1e-2


def train(recipe, steps=STEPS, batch=BATCH, context=CONTEXT, accumulator=None):
    """Losses on a fixed batch, before and after each of ``steps`` AdamW steps under
    ``recipe`` (None: plain torch float32)."""
    torch.manual_seed(0)
    model = GPT(context=context)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    held_out = next(batches(1, 8, context))
    scaler = torch.amp.GradScaler("cpu", enabled=recipe is not None and as_recipe(recipe).loss_scale == "dynamic")
    losses = []
    em = sft.emulate(recipe, accumulator=accumulator, model=model, telemetry=False) if recipe else None
    with em or contextlib.nullcontext():
        data = batches(0, batch, context)
        for step in range(steps + 1):
            with torch.no_grad():
                losses.append(model(*held_out).item())
            if step < steps:
                scaler.scale(model(*next(data))).backward()
                scaler.unscale_(opt)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)    # as nanoGPT does
                scaler.step(opt)
                scaler.update()
                opt.zero_grad()
    return np.array(losses)


RECIPES = [None, "bf16", "fp16", "fp8", "fp8-current", "fp8-block", "mxfp8"]
curves = {recipe or "torch fp32": train(recipe) for recipe in RECIPES}
print(f"{STEPS} AdamW steps, lr {LR}, batches of {BATCH} x {CONTEXT} tokens; loss on a held-out batch\n")
print(f"{'recipe':12s} {'start':>7s} {'end':>7s} {'end / start':>12s} {'end vs fp32':>12s}")
base = curves["torch fp32"][-1]
for name, loss in curves.items():
    print(f"{name:12s} {loss[0]:7.4f} {loss[-1]:7.4f} {loss[-1] / loss[0]:12.3f} {loss[-1] / base - 1:+12.2%}")

# %%
fig, ax = plt.subplots()
styles = ["-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 3)), (0, (3, 1, 1, 1, 1, 1))]
for (name, loss), ls in zip(curves.items(), styles):
    ax.plot(loss, ls=ls, color="black" if name == "torch fp32" else None, label=name)
ax.set_xlabel("step")
ax.set_ylabel("cross-entropy on the held-out batch")
ax.set_title("The same GPT under seven recipes")
ax.legend()
plt.show()

# %% [markdown]
# At this size and step count every recipe follows FP32 closely: the scaled FP8 recipes
# lose little.  The curves part only later, and in larger models; the interesting
# failures are elsewhere.
#
# ## 2. FP8 without scaling
#
# What if the operands were simply rounded into E4M3, with no scale?  A custom recipe says
# exactly that: `fp8=None` (no scaling), `matmul_inputs="fp8_e4m3"` (both operands of
# every product, gradients included, rounded into E4M3).  Its scaled twin keeps
# fp8-current's per-tensor scales with the same E4M3 gradients.  This time a step sees
# 16 x 64 = 1024 tokens: the gradient of the *mean* cross-entropy with respect to a
# logit is (softmax - onehot) / 1024, below 2^-10 everywhere -- and 2^-10 is half of
# E4M3's smallest subnormal 2^-9.

# %%
UNSCALED = as_recipe("fp8-current", fp8=None, matmul_inputs="fp8_e4m3", name="fp8 e4m3, no scaling")
SCALED = as_recipe("fp8-current", fp8_backward="fp8_e4m3", name="fp8 e4m3, current scaling")
big = dict(steps=10, batch=16, context=64)
curves_1024 = {"torch fp32": train(None, **big), SCALED.name: train(SCALED, **big),
               UNSCALED.name: train(UNSCALED, **big)}
for name, loss in curves_1024.items():
    print(f"{name:28s} loss {loss[0]:.4f} -> {loss[-1]:.4f}")

fig, ax = plt.subplots()
for (name, loss), ls in zip(curves_1024.items(), ["-", "--", ":"]):
    ax.plot(loss, ls=ls, marker="o", ms=4, label=name)
ax.set_xlabel("step")
ax.set_ylabel("cross-entropy on the held-out batch")
ax.set_title("1024 tokens a step: E4M3 with and without scales")
ax.legend()
plt.show()

# %% [markdown]
# The unscaled run does not move at all.  The telemetry says why.
#
# ## 3. Per-layer telemetry
#
# `em.telemetry` records every product (call site, kind, shape and the counts); the
# report sums them per call site and kind: `fprop` is the forward product, `dgrad` the
# gradient with respect to the layer's input (gradient x weights), `wgrad` the weight
# gradient (inputs^T x gradient).  A and B are the two operands; `under` is the share of
# their elements that underflowed to zero, `sub` the share that became subnormal, `over`
# the share that overflowed or saturated; `amax` and `scale` are those of the scaled
# recipes.  One forward and backward pass of each recipe:

# %%
def one_step(recipe, accumulator=None, telemetry=True, batch=16, context=64):
    """One forward and backward pass of a fresh model under ``recipe``: (emulation, model)."""
    torch.manual_seed(0)
    model = GPT(context=context)
    with sft.emulate(recipe, accumulator=accumulator, model=model, telemetry=telemetry) as em:
        model(*next(batches(0, batch, context))).backward()
    return em, model


em_unscaled, _ = one_step(UNSCALED, telemetry="operands")
print(em_unscaled.report())

# %%
em_scaled, _ = one_step(SCALED, telemetry="operands")
print(em_scaled.report())

# %%
def shares(em, kind, column):
    return {row["site"]: row[column] for row in em.telemetry.summary() if row["kind"] == kind}


fig, ax = plt.subplots(figsize=(8, 4))
sites = list(shares(em_unscaled, "dgrad", "a_underflow"))
x = np.arange(len(sites))
for offset, (em, name) in zip((-0.2, 0.2), ((em_unscaled, UNSCALED.name), (em_scaled, SCALED.name))):
    got = shares(em, "dgrad", "a_underflow")
    ax.bar(x + offset, [got[s] for s in sites], width=0.4, label=name)
ax.set_xticks(x, sites, rotation=30, ha="right")
ax.set_ylabel("share of gradient elements -> 0")
ax.set_title("dgrad: gradient operand underflowed to zero, per call site")
ax.legend()
plt.tight_layout()
plt.show()
head = shares(em_unscaled, "dgrad", "a_underflow")["lm_head"]
print(f"unscaled: {head:.1%} of the logit gradients became zero; "
      f"scaled: {shares(em_scaled, 'dgrad', 'a_underflow')['lm_head']:.2%}")

# %% [markdown]
# Without a scale the output head's gradient operand is entirely zero, so every gradient
# behind it is zero too: the other rows are zero only because nothing reached them.
# With a per-tensor scale (`scale` column: about 448 / amax), the same E4M3 elements hold
# the gradients with a few percent or less lost.
#
# ## 4. The accumulator: a tensor core, and promotion every 128 products
#
# The FP8 products of an H100 tensor core are not summed in IEEE FP32: the hardware keeps
# fewer bits and truncates while it adds (the `"h100"` model of `softfloat.accumulate`).
# DeepSeek-V3 reported the damage on long sums and cured it by promoting the partial sums
# into FP32 every 128 products (`accumulate_block=128`; their `fp8-block` recipe does it).
# The long sums of a training step are the weight gradients: each sums over the step's
# tokens, 1024 here.
#
# To see the accumulator alone, the operands are fixed: each linear layer's input X and
# output gradient G are captured from one FP32 step, and its weight gradient G^T X is
# computed under fp8-current (the same per-tensor scales whatever the accumulator) with
# the results kept in FP32 (`activations="fp32"`), so that no BF16 rounding hides the
# difference -- once per accumulator, compared with the FP32 accumulator's.

# %%
torch.manual_seed(0)
model = GPT(context=64)
captured = {}


def keep(name):
    def hook(module, args, out):
        out.retain_grad()
        captured[name] = (args[0].detach().flatten(0, 1), out)
    return hook


for name, m in model.named_modules():
    if isinstance(m, nn.Linear):
        m.register_forward_hook(keep(name))
model(*next(batches(0, 16, 64))).backward()
operands = {name: (x, out.grad.flatten(0, 1)) for name, (x, out) in captured.items()}

WIDE = as_recipe("fp8-current", activations="fp32", name="fp8-current, fp32 results")
accumulators = {"fp32": (WIDE, "fp32"), "h100": (WIDE, "h100"),
                "h100, promoted every 128": (as_recipe(WIDE, accumulate_block=128), "h100")}
wgrads, swamped = {}, {}
for label, (recipe, acc) in accumulators.items():
    with sft.emulate(recipe, accumulator=acc) as em:
        wgrads[label] = {name: g.T @ x for name, (x, g) in operands.items()}
    swamped[label] = [row["swamped"] for row in em.telemetry.summary()]

reference = wgrads["fp32"]
errors = {label: {n: float((w[n] - reference[n]).norm() / reference[n].norm()) for n in reference}
          for label, w in wgrads.items() if label != "fp32"}
names = list(reference)
print(f"{'layer (G^T X, K = 1024)':26s}" + "".join(f"{label:>28s}" for label in errors))
for n in names:
    print(f"{n:26s}" + "".join(f"{errors[label][n]:28.2e}" for label in errors))
print("\nshare of the accumulator's additions that were swamped (left the sum unchanged):")
for label, per_layer in swamped.items():
    print(f"  {label:26s} " + "  ".join(f"{v:.2%}" for v in per_layer))

# %%
fig, ax = plt.subplots(figsize=(8, 4))
x = np.arange(len(names))
for offset, label in zip((-0.2, 0.2), errors):
    ax.bar(x + offset, [errors[label][n] for n in names], width=0.4, label=label)
ax.set_yscale("log")
ax.set_xticks(x, names, rotation=30, ha="right")
ax.set_ylabel("relative difference from FP32 accumulation")
ax.set_title("Weight gradients, sums over 1024 tokens: the accumulator alone")
ax.legend()
plt.tight_layout()
plt.show()
ratio = np.median([errors["h100"][n] / errors["h100, promoted every 128"][n] for n in names])
print(f"promotion every 128 products divides the difference by {ratio:.1f} (median over the layers)")

# %% [markdown]
# The H100 model's truncating additions leave every weight gradient a measurable
# distance from the FP32-accumulated one; promoting the partial sums every 128 products
# keeps each truncating run short and leaves the long sum to FP32 (exercise 4 makes the
# sums longer).  Whether the remaining difference matters for training is
# what DeepSeek-V3 measured at their scale; one step at 1024 tokens shows the mechanism.
#
# ## Exercises
#
# 1. Train section 1 for 200 steps (`STEPS = 200`).  Which recipe parts from FP32 first?
#    Add `"mxfp4"`: where does a 4-bit element format stand?
# 2. Make the unscaled recipe of section 2 train: with E5M2 gradients
#    (`matmul_inputs="fp8_e5m2"`), or with 64 tokens a step.  Why does each one help?
# 3. Pass `elementwise=True` to `emulate`: under `"bf16"` the elementwise results are
#    rounded where autocast would hold them in BF16 (what a product's result flows into),
#    and under `"bf16-pure"` layer norm, softmax and the residual additions are rounded
#    too.  What changes in section 1 with each?
# 4. In section 4, replace `"h100"` by `"b200"` or `"v100"`, and sum over 4096 tokens
#    (batch 64).  How does the difference grow with the length of the sums?

# %%
torch.set_num_threads(THREADS)
