"""The matrix products of one recipe, with their scaling state (see :class:`GemmEngine`)."""

from __future__ import annotations

import numpy as np

from .. import _validate
from ..formats import Format, as_format, bf16, fp32
from ..scaled import DelayedScaling
from .kernels import NUMPY_KERNELS, Kernels
from ._recipe import as_recipe, check_accumulator
from ._record import GemmRecord

__all__ = ["GemmEngine", "KINDS"]

#: the three products of a linear layer's training step
KINDS = ("fprop", "dgrad", "wgrad")
_EPS = 1e-12  # torchao's floor on amax


class GemmEngine:
    """The matrix products of one :class:`~softfloat.recipes.Recipe`, with their scaling
    state: each product a composition of bit-level calls, stated below.

    Parameters
    ----------
    recipe : str or Recipe
        A name of :data:`~softfloat.recipes.RECIPES` or a Recipe.
    accumulator : str, Format or FusedAccumulator, optional
        None: the recipe's own; a value overrides it (a format such as "fp32" or a
        hardware model such as "h100").
    history : {"step", "site"}, default "step"
        Delayed scaling: when a product's amax joins its history.  "step": the largest
        amax of each call site and role over a step joins at :meth:`new_step` (the training
        lab's rule: every product of a step uses the scales of the steps before it).
        "site": the largest amaxes of a call site join its history when the site's next
        forward ("fprop") product starts, so the forward product and the backward
        products of one iteration use the same scales -- Transformer Engine's
        per-iteration update, whose backward products reuse the forward's FP8 copies --
        without a global step (what a PyTorch front end needs).
    bias_epilogue : bool, default False
        Where :meth:`gemm` adds a bias.  False: as each family says below (the training
        lab's rule).  True: after the products, in the accumulator's fp32 result, the sum
        then rounded once into ``out``, as cuBLAS's epilogue does (what a PyTorch front end
        wants: "a bias is added in the accumulator after the products, then the sum is
        rounded once to the output format").
    matmul : callable, optional
        What computes the products: :func:`softfloat.matmul` (None), or a function with
        its signature that gives its bits: a shortcut for ``kernels`` whose ``matmul``
        is replaced (``kernels.replace(matmul=matmul)``).
    kernels : Kernels, optional
        What runs the bit-level calls and the float32 steps below on the arrays of the
        products it takes: :data:`~softfloat.recipes.kernels.NUMPY_KERNELS` (None:
        softfloat's functions on numpy arrays), or a subclass of
        :class:`~softfloat.recipes.kernels.Kernels` for other arrays with the same
        results (softfloat.torch's, on a tensor's own device).  A product whose ``a``
        they do not take (:meth:`Kernels.takes <softfloat.recipes.kernels.Kernels.takes>`:
        torch's take tensors) runs on numpy's; the scaling state is the engine's either way.

    Notes
    -----
    ``gemm(a, b, kind, key)`` multiplies a (M, K) by b (K, N), or a stack of B such
    matrices by a stack of B: the products of one batched call, each entry the 2-d
    product stated below, with one difference of the stack being one tensor: a
    per-tensor scale ("delayed", "current") is one per operand over the whole stack (its
    amax is the stack's; a delayed history gains one amax per call), while the row
    tiles, 128 x 128 blocks and MX blocks of the other scalings lie within each matrix,
    as they do for one.  ``kind`` picks the formats
    and scaling roles of the operands: "fprop" (activations x weights: forward, forward,
    roles "input", "weight"), "dgrad" (gradients x weights^T: backward, forward, "grad",
    "weight"), "wgrad" (activations^T x gradients: forward, backward, "input", "grad");
    forward / backward are the recipe's ``fp8_forward`` / ``fp8_backward`` (for unscaled
    recipes both are ``matmul_inputs``).  Below I = ``matmul_inputs``, acc = the
    accumulator, P = ``product``, blk = ``accumulate_block``, fa / fb the operands' formats,
    ``dec(x, f) = decode(x, f, float32)``, and fp32(...) one IEEE binary32 rounding (numpy
    float32 arithmetic).  Every product then ends the same way: a ``bias`` is added as
    each family says (the engine's default ``bias_epilogue=False``); the result D is
    returned as fp32 values, or with ``out`` as ``dec(encode(D, out), out)``.  Each call
    below is a method of the engine's ``kernels`` (numpy's: these very functions; another
    array library's: the same results on its arrays), so each composition is stated once.

    Unscaled recipes (fp32, O1-O3, fp16, bf16, bf16-pure)::

        D = dec(matmul(encode(a, I), encode(b, I), I, accumulator=acc, product=P, block=blk,
                       c=encode(dec(encode(bias, I), I), fp32), out_format=fp32), fp32)

        (the bias, cast into I as autocast casts it, is the accumulator's initial value;
        no bias: c=None)

    Per-tensor scaling, "delayed" (fp8) and "current" (fp8-current)::

        sa = scaled_encode(a, fa, scale=s_a)        # delayed: s_a = DelayedScaling(fa).scale
        sa = scaled_encode(a, fa, amax_epsilon=1e-12)  # current (torchao)
        (sb likewise)
        R = dec(matmul(sa.bits, sb.bits, fa, b_format=fb, accumulator=acc, block=blk,
                       out_format=fp32), fp32)
        D = fp32(R * fp32(sa.scale_inv * sb.scale_inv))  [+ fp32(bias): D = fp32(D + bias)]

        (fa != fb in the backward products of the hybrid recipes: e5m2 gradients times e4m3
        activations or weights; a hardware model runs them on its FP8 path)

    Block scaling, "blocks" (fp8-block, DeepSeek-V3)::

        sa = scaled_encode(a, fa, scaling="blocks", block=(1, 128))
        sb = scaled_encode(b, fb, scaling="blocks", block=(128, 128) for weights, (128, 1) for gradients)
        for each run j of 128 along K (k0 = 128 j):
            R_j = dec(matmul(sa.bits[:, k0:k0+128], sb.bits[k0:k0+128], fa, accumulator=acc,
                             out_format=fp32), fp32)
            T = fp32(T + fp32(R_j * fp32(sa.scale_inv[:, j] * sb.scale_inv[j, column block])))
        D = T (the first term starts T)  [+ fp32(bias)]

    MX, "mx" (mxfp8, mxfp4; OCP MX v1.0)::

        sa = scaled_encode(a, fa, scaling="mx", block=32, scale_rounding=mx_scale_rounding)
        sb = scaled_encode(b.T, fb, scaling="mx", ...)             # blocks of 32 along K
        va, vb = scaled_decode(sa), scaled_decode(sb).T           # q * X, exact
        D = dec(matmul(encode(va, F), encode(vb, F), F, accumulator=acc, out_format=fp32,
                       product=None if F is bf16 else "fp32"), fp32)  [+ fp32(bias)]

        F = bf16 where every q * X is a bf16 value, else fp32 (exact either way: q * X has
        at most 4 significant bits, and so the fp32 products are exact too).

    ``GemmEngine(..., bias_epilogue=True)`` (every family): the bias is added after the
    products, in the accumulator's fp32 result, then the sum is rounded once into ``out``,
    as cuBLAS's epilogue does: ``D = fp32(R' + fp32(bias))`` with R' the family's result
    without a bias (for the scaled families this is the default rule already).

    The roundings into FP8/FP4 saturate (satfinite, as Transformer Engine's, torchao's
    and the MX kernels' casts); :class:`~softfloat.recipes.GemmRecord` counts them from
    their IEEE flags.

    Examples
    --------
    >>> import numpy as np, softfloat as sf
    >>> from softfloat.recipes import GemmEngine
    >>> eng = GemmEngine("bf16")
    >>> a = np.array([[1.0, 2.0**-9]], np.float32); b = np.array([[1.0], [1.0]], np.float32)
    >>> eng.gemm(a, b, "fprop", "layer0").tolist()               # fp32 accumulation
    [[1.001953125]]
    >>> eng.gemm(a, b, "fprop", "layer0", out="bf16").tolist()   # rounded into bf16
    [[1.0]]
    >>> GemmEngine("bf16", accumulator="bf16").gemm(a, b, "fprop", "l").tolist()
    [[1.0]]
    """

    def __init__(self, recipe, *, accumulator=None, history: str = "step", bias_epilogue: bool = False,
                 matmul=None, kernels=None):
        self.recipe = as_recipe(recipe)
        self.accumulator = self.recipe.accumulator if accumulator is None else check_accumulator(accumulator)
        self.history = _validate.one_of("history", history, ("step", "site"))
        if not isinstance(bias_epilogue, (bool, np.bool_)):
            raise TypeError(f"bias_epilogue must be True or False; got {_validate.describe(bias_epilogue)}")
        self.bias_epilogue = bool(bias_epilogue)
        if kernels is None:
            kernels = NUMPY_KERNELS
        elif not isinstance(kernels, Kernels):
            raise TypeError(f"kernels must be a softfloat.recipes.kernels.Kernels (such as its NUMPY_KERNELS); got "
                            f"{_validate.describe(kernels)}")
        #: what runs the bit-level calls (numpy's by default; see the class notes)
        self.kernels = kernels if matmul is None else kernels.replace(matmul=matmul)
        #: what computes the products: softfloat.matmul, or a function with its
        #: signature and bits
        self.matmul = self.kernels.matmul
        #: per (key, role): the DelayedScaling state of the "delayed" recipes
        self.states: dict[tuple, DelayedScaling] = {}
        self._pending: dict[tuple, float] = {}

    def new_step(self) -> None:
        """Delayed scaling with ``history="step"``: record the last step's amaxes (each
        gives the next scale)."""
        for key, amax in self._pending.items():
            self.states[key].update(amax)
        self._pending = {}

    def _new_iteration(self, site: str) -> None:
        """``history="site"``: the pending amaxes of ``site``'s roles join their histories."""
        for state_key in [k for k in self._pending if k[0] == site]:
            self.states[state_key].update(self._pending.pop(state_key))

    # ---- the product ------------------------------------------------------------------------
    def gemm(self, a, b, kind: str, key: str, *, bias=None, out=None, formats=None, record=False):
        """``a @ b`` by the recipe (see the class notes for each family's composition).

        Parameters
        ----------
        a, b : array_like
            (M, K) and (K, N) float values (float32 as the lab holds them), or stacks
            (B, M, K) and (B, K, N) of one call's B products (class notes).
        kind : {"fprop", "dgrad", "wgrad", "recompute"}
            Which operand formats and scaling roles apply (class notes).  "recompute":
            a forward product run again within its iteration (activation
            checkpointing's recompute in the backward pass), fprop's formats and roles;
            with ``history="site"`` it starts no new iteration, so it takes the scales
            its first run took.
        key : str
            The call site (a layer's name): delayed scaling keeps one history per key and role.
        bias : array_like, optional
            (N,) values added to every row (or values broadcast to the result): as each
            family says, or after the products with the engine's ``bias_epilogue``.
        out : Format or str, optional
            The format the result is rounded into (nearest even); None: fp32 values.
        formats : (Format or None, Format or None), optional
            Formats a and b already hold (unscaled recipes: an operand already in the
            inputs format is encoded without flags; its record counts nothing rounded).
        record : bool or "operands", default False
            True: also return a :class:`GemmRecord`; "operands": the same without the
            accumulator's swamped count (``additions``/``swamped`` None), which adds to
            the product's cost (matmul's ``return_flags="swamped"``: about a fifth with
            FP8 on "h100", three quarters for bf16 into fp32, on this project's CPU).

        Returns
        -------
        numpy.ndarray (fp32 values, or values of ``out``), or the engine's kernels' array
        where they take ``a`` (softfloat.torch's: a tensor on ``a``'s device); and a
        GemmRecord with ``record`` (the same numbers whatever the kernels).
        """
        return self._gemm(a, b, kind, key, {"bias": bias, "out": out, "formats": formats, "record": record}, None)

    def gemm_kept(self, operands: dict, a, b, kind: str, key: str, **options):
        """:meth:`gemm` (``options``: its keywords) for one of the products of one
        operation, keeping its quantised operands in ``operands`` for the others.

        Parameters
        ----------
        operands : dict
            A dict the caller keeps for the products of one operation (an autograd node:
            its fprop, dgrad and wgrad), empty at first: the engine keeps there each
            scaling role's quantised operand ("input", "weight", "grad") and takes it
            again instead of quantising the same values twice -- the input of fprop in
            wgrad (transposed), the weight of fprop in dgrad, the gradient of dgrad in
            wgrad.  Only where quantising again gives the same bits and record: the
            unscaled and per-tensor families, a delayed scale unchanged since (its amax
            still joins the pending history); without ``formats``.  The caller's
            promise: within one dict, each role's operand holds the same values every
            time (transposed as ``kind`` says).  It holds the quantised copies (1 or 2
            bytes an element) as long as the caller keeps it, as Transformer Engine
            keeps its FP8 copies.

        >>> import numpy as np
        >>> eng, kept = GemmEngine("bf16"), {}
        >>> x, w, g = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), np.ones((2, 4), np.float32)
        >>> y = eng.gemm_kept(kept, x, w, "fprop", "l")
        >>> sorted(kept)                                   # wgrad takes x's bits transposed
        ['input', 'weight']
        >>> eng.gemm_kept(kept, x.T, g, "wgrad", "l").tolist() == eng.gemm(x.T, g, "wgrad", "l").tolist()
        True
        """
        if not isinstance(operands, dict):
            raise TypeError(f"operands must be a dict (empty at first, kept by the caller); got "
                            f"{_validate.describe(operands)}")
        given = {"bias": None, "out": None, "formats": None, "record": False}
        unknown = set(options) - set(given)
        if unknown:
            raise TypeError(f"gemm_kept takes gemm's keywords {', '.join(given)}; got {', '.join(sorted(unknown))}")
        return self._gemm(a, b, kind, key, {**given, **options}, operands)

    def _gemm(self, a, b, kind, key, options, operands):
        """:meth:`gemm` (its keywords in ``options``), keeping operands where given."""
        bias, out, formats, record = options["bias"], options["out"], options["formats"], options["record"]
        k = self.kernels if self.kernels.takes(a) else NUMPY_KERNELS
        recompute = kind == "recompute"
        kind = "fprop" if recompute else kind
        a, b, out, formats = self._arguments(k, (a, b), kind, out, formats, record)
        if bias is not None:  # named here: the product below calls it c, or adds it last
            result = tuple(a.shape[:-1]) + (b.shape[-1],)
            if not _broadcasts_to(np.shape(bias), result):
                raise ValueError(f"bias of shape {tuple(np.shape(bias))} does not broadcast to the result shape {result}")
        ops = {"record": record, "ops": [], "additions": 0, "swamped": 0, "kernels": k, "kind": kind,
               "cache": operands if formats == (None, None) else None}
        scaling, bias_epilogue = self.recipe.fp8, self.bias_epilogue
        if scaling is None:
            c = None if bias is None or bias_epilogue else _bias_as_c(k, bias, self.recipe.matmul_inputs)
            acc = self._unscaled(a, b, formats, c, ops)
        elif scaling in ("delayed", "current"):
            if self.history == "site" and kind == "fprop" and not recompute:
                self._new_iteration(key)
            acc = self._per_tensor(a, b, kind, key, ops)
        elif scaling == "blocks":
            acc = self._blocks(a, b, kind, ops)
        else:
            acc = self._mx(a, b, kind, ops)
        if bias is not None and (scaling is not None or bias_epilogue):
            acc = k.add(acc, k.operand(bias))
        values, output = _round_out(k, acc, out, bool(record))
        if not record:
            return values
        full = record is True
        rec = GemmRecord(kind, key, ops["ops"][0], ops["ops"][1], ops["additions"] if full else None,
                         ops["swamped"] if full else None, output)
        return values, rec

    def _arguments(self, k, operands, kind, out, formats, record):
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(map(repr, KINDS + ('recompute',)))}; got {kind!r}")
        a, b = (k.operand(x) for x in operands)
        if not (a.ndim == b.ndim and a.ndim in (2, 3) and a.shape[-1] == b.shape[-2]
                and a.shape[:-2] == b.shape[:-2]):
            raise ValueError(f"a and b must be matrices (M, K) and (K, N), or stacks of as many (B, M, K) and "
                             f"(B, K, N); got shapes {tuple(a.shape)} and {tuple(b.shape)}")
        if not (k.is_float(a) and k.is_float(b)):
            raise TypeError(f"a and b must hold float values; got {a.dtype} and {b.dtype}")
        if not (record is False or record is True or (isinstance(record, str) and record == "operands")):
            raise ValueError(f"record must be False, True or 'operands'; got {record!r}")
        out = None if out is None else as_format(out, "out")
        if formats is None:
            formats = (None, None)
        elif not (isinstance(formats, (tuple, list)) and len(formats) == 2):
            raise TypeError(f"formats must be a pair (format of a, format of b); got {_validate.describe(formats)}")
        formats = tuple(None if f is None else as_format(f, "formats") for f in formats)
        return a, b, out, formats

    def _roles(self, kind):
        """(format a, format b, scaling role a, role b) of a product."""
        fwd, bwd = self.recipe.fp8_forward, self.recipe.fp8_backward
        if kind == "fprop":
            return fwd, fwd, "input", "weight"
        if kind == "dgrad":
            return bwd, fwd, "grad", "weight"
        return fwd, bwd, "input", "grad"  # wgrad

    def _matmul(self, bits_a, fa, bits_b, fb, ops, **options):
        """decode(matmul(bits_a, bits_b, ...), fp32) with the engine's accumulator; its
        swamped additions counted where the record asks for them."""
        if fa != fb:
            options["b_format"] = fb
        return self._run(bits_a, bits_b, fa, ops, **options)

    def _run(self, bits_a, bits_b, fmt, ops, **options):
        k, counted = ops["kernels"], ops["record"] is True  # the record's swamped count: the accumulator's alone
        result = k.matmul(bits_a, bits_b, fmt, accumulator=self.accumulator, out_format=fp32,
                          return_flags="swamped" if counted else False, **options)
        if counted:
            result, swamped = result
            ops["additions"] += int(np.prod(bits_a.shape, dtype=np.int64) * bits_b.shape[-1])
            ops["swamped"] += k.total(swamped)
        return k.decode(result, fp32)

    # ---- the families ----------------------------------------------------------------------------
    def _unscaled(self, a, b, formats, c, ops):
        fmt, r = self.recipe.matmul_inputs, self.recipe
        bits = [_encode(ops, x, fmt, held=f == fmt, role=role)
                for x, f, role in zip((a, b), formats, _ROLES[ops["kind"]])]
        return self._run(bits[0], bits[1], fmt, ops, product=r.product, block=r.accumulate_block, c=c)

    def _scaled(self, x, fmt, ops, **options):
        """scaled_encode with ``options``; its record kept where asked for."""
        k = ops["kernels"]
        if not ops["record"]:
            return k.scaled_encode(x, fmt, **options)
        st, flags = k.scaled_encode(x, fmt, flags=True, **options)
        amax = np.asarray(k.host(st.amax), np.float64)
        scaling = options.get("scaling")
        if scaling is None:  # per tensor: one fp32 scale
            scale = float(np.asarray(k.host(st.scales)).reshape(-1)[0])
        elif scaling == "mx":  # 1/X, a power of two (NaN for an E8M0 NaN block)
            scale = 1 / np.asarray(k.host(st.scale_inv), np.float64)
        else:
            scale = np.asarray(k.host(st.scales), np.float64)
        ops["ops"].append(k.record(fmt, flags, k.decode(st.bits, fmt),
                                   amax=float(np.max(amax)) if amax.size else 0.0, scale=scale))
        return st

    def _per_tensor(self, a, b, kind, key, ops):
        fa, fb, role_a, role_b = self._roles(kind)
        bits_a, inv_a = self._one_scale(a, fa, (key, role_a), ops)
        bits_b, inv_b = self._one_scale(b, fb, (key, role_b), ops)
        acc = self._matmul(bits_a, fa, bits_b, fb, ops, block=self.recipe.accumulate_block)
        k = ops["kernels"]
        return k.multiply(acc, k.multiply(inv_a, inv_b))

    def _one_scale(self, x, fmt, state_key, ops):
        """(bits, scale_inv) of ``x`` scaled into ``fmt`` by its role's scale; kept in
        (or taken from) the caller's ``operands``."""
        role = state_key[1]
        if self.recipe.fp8 == "current":
            found = _reused(ops, role, x, fmt, None)
            if found is None:
                st = self._scaled(x, fmt, ops, amax_epsilon=_EPS)
                found = _keep(ops, role, st.bits, fmt, None, (st.scale_inv, None))
            return found[0], found[1][0]
        state = self.states.setdefault(state_key, DelayedScaling(fmt))
        found = _reused(ops, role, x, fmt, state.scale)
        if found is None:
            st = self._scaled(x, fmt, ops, scale=state.scale)
            found = _keep(ops, role, st.bits, fmt, state.scale, (st.scale_inv, float(st.amax)))
        bits, (scale_inv, amax) = found
        # the step's (the iteration's) amax, the largest over its quantisations, joins the
        # history after it: at new_step(), or at the site's next fprop
        self._pending[state_key] = max(self._pending.get(state_key, amax), amax)
        return bits, scale_inv

    def _blocks(self, a, b, kind, ops):
        fa, fb, _, role_b = self._roles(kind)
        K = a.shape[-1]
        b_block = (128, 128) if role_b == "weight" else (128, 1)
        sta = self._scaled(a, fa, ops, scaling="blocks", block=(1, 128))
        stb = self._scaled(b, fb, ops, scaling="blocks", block=b_block)
        k = ops["kernels"]
        da = sta.scale_inv  # ([B,] M, K/128)
        db_cols = k.repeat(stb.scale_inv, b_block[1], -1)[..., :b.shape[-1]]  # ([B,] K/128, N)
        total = None
        for j, k0 in enumerate(range(0, K, 128)):
            part = self._matmul(sta.bits[..., k0:k0 + 128], fa, stb.bits[..., k0:k0 + 128, :], fb, ops)
            term = k.multiply(part, k.multiply(da[..., j:j + 1], db_cols[..., j:j + 1, :]))
            total = term if total is None else k.add(total, term)
        return total

    def _mx(self, a, b, kind, ops):
        fa, fb, _, _ = self._roles(kind)
        rounding = self.recipe.mx_scale_rounding
        k = ops["kernels"]
        sta = self._scaled(a, fa, ops, scaling="mx", block=32, scale_rounding=rounding)
        stb = self._scaled(k.transpose(b), fb, ops, scaling="mx", block=32, scale_rounding=rounding)
        va = k.scaled_decode(sta)      # q * X, exact
        vb = k.transpose(k.scaled_decode(stb))
        # q * X has at most 4 significant bits and a power-of-two scale: a bf16 value
        # unless the scale leaves bf16's range, then carried as fp32 (exact either way)
        bits_a = _held(k, va, bf16)
        bits_b = None if bits_a is None else _held(k, vb, bf16)
        if bits_b is None:
            return self._run(k.encode(va, fp32), k.encode(vb, fp32), fp32, ops, product="fp32")
        return self._run(bits_a, bits_b, bf16, ops, product=None)


def _held(k, values, fmt: Format):
    """``encode(values, fmt)`` where every value is a value of ``fmt`` (exact), else None
    (also where one is a NaN)."""
    bits = k.encode(values, fmt)
    return bits if k.equal(k.decode(bits, fmt, "float64"), values) else None


def _encode(ops, x, fmt: Format, *, held: bool, role: str):
    """encode(x, fmt); its record kept where asked for (values already in ``fmt``: exact);
    kept in (or taken from) the caller's ``operands``."""
    found = None if held else _reused(ops, role, x, fmt, None)
    if found is not None:
        return found[0]
    k = ops["kernels"]
    if not ops["record"]:
        bits = k.encode(x, fmt)
    elif held:
        ops["ops"].append(k.exact_record(fmt, x))
        return k.encode(x, fmt)
    else:
        bits, flags = k.encode(x, fmt, flags=True)
        ops["ops"].append(k.record(fmt, flags, k.decode(bits, fmt)))
    return bits if held else _keep(ops, role, bits, fmt, None, None)[0]


#: the scaling role of each product's operands (a, b)
_ROLES = {"fprop": ("input", "weight"), "dgrad": ("grad", "weight"), "wgrad": ("input", "grad")}
#: the operands that a product takes transposed: wgrad's input (a^T), dgrad's weight (b^T)
_TRANSPOSED = {("wgrad", "input"), ("dgrad", "weight")}


def _keep(ops, role: str, bits, fmt: Format, scale, extra):
    """Keep ``role``'s quantised operand (its bits as this product takes them, the format,
    the scale it was made with, ``extra``: what the family needs again, and its record)
    in the caller's ``operands``; return (bits, extra)."""
    cache = ops["cache"]
    if cache is not None:
        record = ops["ops"][-1] if ops["record"] else None
        cache[role] = (bits, (ops["kind"], role) in _TRANSPOSED, fmt, scale, extra, record, ops["kernels"])
    return bits, extra


def _reused(ops, role: str, x, fmt: Format, scale):
    """(bits, extra) of ``role``'s operand kept by an earlier product of the caller's
    ``operands``, turned as this product takes it, where quantising ``x`` again would
    give them (the same format, scale and kernels, a record where one is asked for; the
    shape checked); its record joins this product's.  Else None."""
    cache = ops["cache"]
    entry = None if cache is None else cache.get(role)
    if entry is None:
        return None
    bits, flipped, kept_fmt, kept_scale, extra, record, k = entry
    if kept_fmt is not fmt or kept_scale != scale or k is not ops["kernels"] or (ops["record"] and record is None):
        return None
    if flipped != ((ops["kind"], role) in _TRANSPOSED):
        bits = k.transpose(bits)
    if tuple(bits.shape) != tuple(x.shape):
        return None
    if ops["record"]:
        ops["ops"].append(record)
    return bits, extra


def _broadcasts_to(shape, target: tuple) -> bool:
    try:
        return np.broadcast_shapes(tuple(shape), target) == target
    except ValueError:
        return False


def _bias_as_c(k, bias, fmt: Format):
    """The bias cast into ``fmt`` (as autocast casts it with the weights), as fp32 bits:
    the accumulator's initial value."""
    return k.encode(k.decode(k.encode(k.operand(bias), fmt), fmt, "float64"), fp32)


def _round_out(k, acc, out, recorded):
    """(values of ``out`` nearest ``acc``, or ``acc`` itself; the output record)."""
    if out is None:
        return acc, None
    if not recorded:
        return k.quantize(acc, out), None
    bits, flags = k.encode(acc, out, flags=True)
    values = k.decode(bits, out, out.value_dtype())
    return values, k.record(out, flags, values)
