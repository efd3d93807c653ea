"""``emulate(recipe)``: torch's matrix products, forward and backward, run bit-exact
through a :class:`softfloat.recipes.GemmEngine` while a ``with`` block is active."""

from __future__ import annotations

import sys
import threading
import types
import warnings

import torch
from torch.overrides import TorchFunctionMode

from ..recipes import GemmEngine, as_recipe
from . import _amp, _ops, _recurrent
from ._amp import Widths
from ._elementwise import ELEMENTWISE, Steps, in_place
from ._engine_kernels import TORCH_KERNELS
from ._sites import Sites, eager
from ._tensors import check_device
from .telemetry import GemmTelemetry, Telemetry

__all__ = ["Emulation", "emulate"]

#: per product kind, the recipe field naming the format the result is rounded into
_OUTPUT = {"fprop": "activations", "dgrad": "gradients", "wgrad": "gradients"}


def emulate(recipe, *, accumulator=None, elementwise=False, model=None, telemetry=True) -> "Emulation":
    """A context manager under which torch's matrix products on float tensors run in
    ``recipe``'s emulated precision, forward and backward, bit for bit.

    Inside the ``with`` block, ``F.linear`` (so every ``nn.Linear``), ``torch.matmul``
    and ``@``, ``mm``, ``bmm``, ``addmm``, ``baddbmm``, ``addmv``, ``addbmm`` (and in
    place: ``addmm_``, ``baddbmm_``, ``addmv_``, ``addbmm_``), ``mv``, ``dot``, ``vdot``,
    ``inner``, ``linalg.vecdot``, ``tensordot``, ``outer`` (``ger``), ``addr`` (``addr_``)
    and ``kron`` (each output one product, k = 1; addr's input in the epilogue),
    ``linalg.multi_dot`` (and ``chain_matmul``) and ``matrix_power`` (in ATen's order), ``cdist`` (where ATen
    takes a product), ``einsum`` (several operands in torch's pairs),
    ``F.conv1d``/``2d``/``3d`` (unfold, then one product per group), ``F.conv_transpose1d``/``2d``/``3d`` (the convolution of the
    zero-stuffed input; ``torch.convolution`` either) and ``F.scaled_dot_product_attention`` (decomposed: Q K^T, scale,
    mask, softmax, dropout, P V; see ``softfloat.torch._attention``) -- and so the
    products inside ``nn.MultiheadAttention`` and ``nn.Transformer*`` layers, whose
    Python code runs with the emulation reaching into it, and ``F.linear_cross_entropy``'s
    (run as defined: the cross entropy of the emulated ``F.linear``) -- on float16/bfloat16/float32/
    float64 tensors each become custom autograd Functions whose forward product
    ("fprop") and backward products ("dgrad" = grad_output x weights^T, "wgrad" =
    inputs^T x grad_output) run through one :class:`softfloat.recipes.GemmEngine`:
    operands quantised as the recipe says (scaled FP8 with per-site amax history for
    delayed scaling; a batched call -- bmm, a batched matmul or einsum, baddbmm,
    attention's heads, a grouped convolution's groups -- is one product of its site: a
    per-tensor scale is one per operand over the whole call, from the history as it was
    before the call, which then gains the call's amax once; row tiles, blocks and MX
    blocks stay within each matrix), products and sums in ``accumulator``, results rounded into the
    recipe's ``activations`` format (forward) or ``gradients`` format (backward).  A
    bias (``F.linear``'s, ``addmm``'s ``input``) is added in the accumulator after the
    products and the sum rounded once into the output format, as cuBLAS's epilogue does.

    Pencil-and-paper definition (``emulate("bf16", accumulator="fp32")``)::

        F.linear(x, w) == sf.decode(sf.matmul(sf.encode(x, "bf16"), sf.encode(w.T, "bf16"),
                                              "bf16", accumulator="fp32", out_format="bf16"), "bf16")

    bit for bit (sequential k order), and the backward products likewise on the saved
    operands; other recipes are defined by the engine's composition (see
    :class:`softfloat.recipes.GemmEngine`).

    Preconditions and behaviour
    ---------------------------
    - Tensors keep their dtype: a float32 model stays float32 and its tensors hold
      values of the emulated formats (a float16/bfloat16 tensor receives the result cast
      into its dtype, exact when that dtype holds the output format).  Inside
      ``torch.autocast`` a product torch would run in autocast's dtype has its float
      operands cast into it first, as autocast casts them, and returns that dtype
      (``softfloat.torch._autocast`` asks torch which products those are; an ``nn.LSTM``
      that torch runs whole in autocast's dtype, as oneDNN's kernel on the CPU, has its
      input, states and weights cast alike).
      Convolutions return torch's memory format (channels-last where the input or the
      weight is).
    - ``nn.LSTM``/``GRU``/``RNN`` (packed sequences too) and their cells
      (``nn.LSTMCell``/``GRUCell``/``RNNCell``) are written out in torch calls whose
      products are emulated (``softfloat.torch._recurrent``: the input's and the hidden
      state's products, then PyTorch's gate equations in the tensors' dtype, in ATen's
      order of operations).  Products computed inside one torch kernel
      (``nn.Bilinear``, negative matrix powers, ``matrix_exp``, ``cov``/``corrcoef``,
      ``householder_product``, ``conv_tbc``, ``F.scaled_mm``/``grouped_mm``, ``nn.EmbeddingBag``'s weighted sums with
      ``per_sample_weights``, ``torch.linalg``'s factorizations and solvers and the norms
      taken from singular values: ``softfloat.torch._opaque.out_of_reach``) are out
      of reach: they run as torch runs them,
      with a UserWarning once per block and function; so do TorchScript modules
      (``torch.jit.script``/``trace``), whose operations never reach Python.  Tracing a model
      inside the block (``torch.jit.trace``, ``torch.export``: fake tensors) is a
      NotImplementedError: a trace cannot record the emulation.
    - Integer products pass through to torch unemulated (they are exact); complex
      and sparse operands are a TypeError (a RuntimeError with the same message from
      ``Tensor.matmul``, which the ``@`` operator calls and whose TypeErrors it turns
      into "unsupported operand"); ``torch.sparse.mm`` and torch's other sparse products
      run as torch runs them, with a UserWarning (below); a tensor on a device without
      values (meta) is a ValueError.
    - Second derivatives are not emulated: differentiating a gradient of an emulated
      product (``create_graph=True``, then backward again, as a gradient penalty does)
      raises a RuntimeError that says so.  On an accelerator (CUDA) the whole product runs on the tensors'
      device, in torch operations with the same bits as the numpy reference: the
      operands' quantisation (softfloat.torch._scaled, ._kernels), the products and
      their accumulation (softfloat.torch._accumulate), the scaling and the output
      rounding -- the engine's one composition per recipe, run by softfloat.torch's
      kernels (softfloat.torch._engine_kernels); the telemetry's counts are summed
      there too, and only they, the amaxes and the scales come to the host.  On the CPU the
      engine runs softfloat's numpy kernels on views of the tensors (faster there).
    - An optimizer's ``step()`` keeps its own arithmetic: its products (LBFGS's dot
      products, Muon's Newton-Schulz iteration) run as torch runs them, in their
      tensors' dtype, as its updates do; the closure it calls (the model) is emulated.
    - Backward products of tensors made inside the block are emulated even when
      ``backward()`` runs after it (each product keeps the engine), and the telemetry
      stays readable after it.
    - A backward pass started inside the block runs its Python code under the
      emulation too: activation checkpointing's recompute
      (``torch.utils.checkpoint``, reentrant or not) gives the forward's bits --
      its products take the scales of their iteration (no new delayed-scaling
      iteration) -- and so the gradients of the model without checkpointing; the
      products of a custom Function's Python backward are emulated as forward
      products.  (A backward started after the block runs that Python code in
      torch's arithmetic.)
    - Leaving the block restores torch exactly: the TorchFunctionMode is popped and the
      global module hooks are removed.  Nested blocks: the innermost one runs the
      products while it is active.  The mode is per thread (as every TorchFunctionMode):
      products on other threads run in torch's own arithmetic.
    - Not emulated (yet): the bias gradient (a sum in the gradient's dtype); attention's
      softmax (torch's float32 softmax, then rounded into the activations format) and the
      backward of its scale, mask, softmax and dropout (torch's arithmetic); the
      additions of col2im in a convolution's input gradient where windows overlap (torch's
      float32 additions of emulated values); ``einsum``'s one-operand equations and
      elementwise products (torch's, as ``torch.sum`` and ``a * b``), and "..." with
      more than two operands (NotImplementedError naming the equation); products inside
      ``torch.func`` transforms (``vmap``, ``grad``: NotImplementedError).

    Parameters
    ----------
    recipe : str or softfloat.recipes.Recipe
        A name of :data:`softfloat.recipes.RECIPES` ("bf16", "fp8", ...) or a Recipe.
    accumulator : str, Format or FusedAccumulator, optional
        None: the recipe's own.  A format ("fp32") or a tensor-core model ("h100").
    elementwise : bool, default False
        Also round the results of elementwise operations into the recipe's
        ``activations`` format, in the forward pass, with a straight-through gradient:
        ``+ - * /`` in every spelling (functions, methods, operators, reflected,
        in place -- the tensor rounded in place -- and ``out=``), ``pow``, ``sqrt``,
        ``rsqrt``, ``exp``, ``log``, ``sigmoid``, ``tanh``, ``relu``, ``gelu``, ``silu``,
        ``softplus``, ``mish``, ``elu``, ``leaky_relu``, ``hardswish``, ``hardsigmoid``,
        ``softmax``, ``log_softmax``, ``layer_norm``, ``rms_norm``, ``group_norm``,
        ``batch_norm``, ``instance_norm``, ``dropout`` (and its ``1d``/``2d``/``3d``,
        ``alpha`` and ``feature_alpha`` forms; each computed by torch in the tensors'
        dtype, then rounded once; a complex result part by part), and so the modules
        calling them; not reductions (``sum``, ``mean``) or other functions.  Nothing
        is rounded inside an optimizer's ``step()`` (its updates are not activations)
        but the closure it calls (LBFGS's: the model's forward and backward).  That is
        all for a pure recipe ("O3", "bf16-pure", "fp32": the loss in the activations
        format).  Under
        an autocast recipe (a wider loss format: "fp16", "bf16", "O1", "O2", the FP8
        ones) only what AMP holds in float16/bfloat16 is rounded: results whose tensor
        operands promote (torch's type promotion) from activations -- products'
        results and what derives from them alone -- but not autocast's float32
        operations (the losses, softmax, log_softmax, exp, log, pow, rsqrt,
        layer_norm, group_norm, sum, ...); inputs, parameters, gradients and those
        results are float32 there and stay unrounded, so a residual stream from a
        float32 embedding stays float32 and ``torch.amp.GradScaler.scale``'s ``loss *
        scale`` is float32's product; the reductions AMP returns in float16 (``mean``,
        ``var``, ``std``, ``nansum``, ``var_mean``, ``std_mean`` of activations) are
        rounded, ``nanmean`` as ATen composes it; ``.float()`` gives float32,
        ``.type_as(activation)`` rounds.  The lists: ``softfloat.torch._elementwise``,
        ``softfloat.torch._amp``.
    model : torch.nn.Module, optional
        The module whose ``named_modules()`` name the call sites; default: the first
        module called inside the emulation (its first block).  Modules outside it are
        named by type and instance, numbered in the order they first ran (``Linear[1]``,
        ``Linear[2]``): each module instance is its own call site (its own FP8 scaling
        state), whether or not it is in the model.
    telemetry : True, False or "operands", default True
        Record the engine's counts of every product; "operands" leaves out the
        accumulator's swamped additions, which cost several times the product itself.
        Either keeps one record per product (a batched call is one) until
        ``em.telemetry.clear()``: a few hundred bytes each, so a long run grows by
        about that times the products per step.  False records nothing
        (``em.telemetry`` stays empty): memory stays bounded however long the run.

    Returns
    -------
    Emulation
        Enter it with ``with``; ``em.telemetry`` and ``em.report()`` after a step.

    Raises
    ------
    ValueError, TypeError
        An unknown recipe or accumulator (raised here, before any product runs).

    Examples
    --------
    >>> import torch, torch.nn.functional as F, softfloat.torch as sft
    >>> x, w = torch.tensor([[1.0, 2.0**-9]]), torch.tensor([[1.0, 1.0]])
    >>> with sft.emulate("bf16", accumulator="fp32") as em:
    ...     y = F.linear(x, w)       # 1 + 2**-9 rounded into bf16
    >>> y.tolist(), em.telemetry[0].site, em.telemetry[0].kind
    ([[1.0]], 'linear#1', 'fprop')
    """
    return Emulation(recipe, accumulator=accumulator, elementwise=elementwise, model=model,
                     telemetry=telemetry)


class Emulation:
    """An emulated-precision region (made by :func:`emulate`): a context manager that
    also keeps the telemetry of what ran."""

    def __init__(self, recipe, *, accumulator=None, elementwise=False, model=None, telemetry=True):
        self.recipe = _named("recipe", as_recipe, recipe)
        self.accumulator = accumulator
        # tensors (the operands' device takes the torch path: softfloat.torch._products)
        # run on torch's kernels, numpy views on numpy's
        self.engine = _named("accumulator", lambda a: GemmEngine(self.recipe, accumulator=a, history="site",
                                                                bias_epilogue=True, kernels=TORCH_KERNELS),
                             accumulator)
        if not isinstance(elementwise, bool):
            raise TypeError(f"elementwise must be True or False; got {type(elementwise).__name__}")
        if model is not None and not isinstance(model, torch.nn.Module):
            raise TypeError(f"model must be a torch.nn.Module or None; got {type(model).__name__}")
        self.elementwise = elementwise
        # autocast recipes (a loss format wider than the activations) keep float32 where
        # autocast does (softfloat.torch._amp); pure ones round every listed operation
        # (an account kept only with elementwise: _widths set implies it)
        autocast = self.recipe.loss.precision > self.recipe.activations.precision
        self._widths = Widths() if elementwise and autocast else None
        if telemetry not in (True, False, "operands"):
            raise ValueError(f"telemetry must be True, False or 'operands'; got {telemetry!r}")
        self.record = telemetry
        self.telemetry = Telemetry()
        self._model = model
        self._mode = None
        self._sites = Sites(model)  # the names hold over every block, as the engine's state does
        self._steps = Steps()
        self._lock = threading.Lock()

    # ---- the context ----------------------------------------------------------------
    def __enter__(self) -> "Emulation":
        if self._mode is not None:
            raise RuntimeError("this Emulation is already active; make another with softfloat.torch.emulate")
        self._mode = _Mode(self)
        _skip_as_frame(_Mode.__torch_function__)
        self._sites.install()
        self._steps.install()
        try:
            self._mode.__enter__()
        except BaseException:
            self._sites.remove()
            self._steps.remove()
            self._mode = None
            raise
        return self

    def __exit__(self, *exc) -> None:
        mode, self._mode = self._mode, None
        try:
            mode.__exit__(*exc)
        finally:
            self._sites.remove()
            self._steps.remove()

    def report(self) -> str:
        """The per-site table of :meth:`Telemetry.report`, headed by the recipe."""
        acc = self.accumulator if self.accumulator is not None else self.recipe.accumulator
        acc = getattr(acc, "name", acc)
        return f"recipe {self.recipe.name}, accumulator {acc}\n\n{self.telemetry.report()}"

    def plot(self, metric: str = "underflow", top: int = 10, ax=None):
        """The worst call sites by ``metric`` as a bar chart: :meth:`Telemetry.plot`
        (needs matplotlib), titled with the recipe; returns the Axes.

        >>> import matplotlib; matplotlib.use("Agg")
        >>> import torch, softfloat.torch as sft
        >>> with sft.emulate("fp8", accumulator="fp32") as em:
        ...     y = torch.ones(2, 4) @ torch.full((4, 3), 1e-9)   # first step: scale 1, B underflows
        >>> ax = em.plot("underflow")
        >>> [label.get_text() for label in ax.get_yticklabels()], float(ax.patches[0].get_width())
        (['matmul#1 fprop'], 1.0)
        """
        ax = self.telemetry.plot(metric, top=top, ax=ax)
        ax.set_title(f"{ax.get_title()} (recipe {self.recipe.name})")
        return ax

    def __repr__(self) -> str:
        state = "active" if self._mode is not None else "inactive"
        return f"<Emulation {self.recipe.name} ({state}), {len(self.telemetry)} products>"

    # ---- one product ------------------------------------------------------------------
    def _runner(self, op: str):
        """The engine call of one torch call's products, bound to its call site."""
        site = self._sites.name(op)
        engine, record, telemetry = self.engine, self.record, self.telemetry
        outputs = {kind: getattr(self.recipe, field) for kind, field in _OUTPUT.items()}

        def run(a, b, kind, *, bias=None, part="", rounded=True, operands=None):  # part: a sub-site, e.g. ".qk"
            # a forward product inside a backward pass: a checkpoint's recompute (same scales)
            again = kind == "fprop" and torch._C._current_graph_task_id() != -1
            options = {"bias": bias, "out": outputs[kind] if rounded else None, "record": record}
            how = "recompute" if again else kind
            got = engine.gemm(a, b, how, site + part, **options) if operands is None else \
                engine.gemm_kept(operands, a, b, how, site + part, **options)
            if not record:  # telemetry=False keeps nothing per product
                return got
            values, rec = got
            batch = a.shape[0] if a.ndim == 3 else 1
            telemetry.append(GemmTelemetry(site + part, kind, op, tuple(a.shape[-2:]) + (b.shape[-1],), rec, batch))
            return values
        return run

    def _round(self, t):
        """``t`` rounded into the activations format, straight-through (elementwise), in
        ``t``'s dtype (as a product's result: a float16 model's activations stay float16,
        where quantize gives float32 for a format float16 does not hold, as bf16); a
        complex ``t`` (torch's complex arithmetic, a rotary embedding's) has its real and
        imaginary parts rounded, as a cast of their float32 values into the format does."""
        from ._quantize import _StraightThrough
        check_device("an elementwise result", t)
        if t.dtype.is_complex:
            return torch.view_as_complex(self._round(torch.view_as_real(t)))
        rounded = _StraightThrough.apply(t, self.recipe.activations, {})
        return rounded if rounded.dtype == t.dtype else rounded.to(t.dtype)


def _named(argname: str, make, value):
    """``make(value)``, its ValueError/TypeError prefixed with the argument's name when
    the message does not start with it."""
    try:
        return make(value)
    except (ValueError, TypeError) as exc:
        text = str(exc)
        if text.startswith(argname):
            raise
        raise type(exc)(f"{argname}={value!r}: {text}") from None


#: the methods the @ operator reaches, whose TypeErrors it would turn into NotImplemented
_OPERATORS = frozenset({torch.Tensor.matmul, torch.Tensor.__matmul__, torch.Tensor.__rmatmul__})

#: the functions that run a backward pass, whose Python code stays under the emulation
_BACKWARDS = frozenset({torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad})

#: F.linear_cross_entropy (torch >= 2.13), defined as cross_entropy(linear(...)); its
#: ``options`` only chunk that work (in a custom Function of torch's): run as defined
_LINEAR_CROSS_ENTROPY = getattr(torch.nn.functional, "linear_cross_entropy", None)

#: Python-level torch functions that hand themselves whole to a function mode: run
#: decomposed (:func:`_decomposed`), their products reach the emulation
_COMPOSITES = frozenset(f for f in (torch.nn.functional.multi_head_attention_forward, _LINEAR_CROSS_ENTROPY)
                        if f is not None)

_DECOMPOSED: dict = {}


def _decomposed(func):
    """A copy of the Python function ``func`` whose ``has_torch_function`` checks say no,
    so that, called with the mode on the stack, it runs its own code and the torch calls
    inside reach the mode (the original would hand itself to the mode whole)."""
    found = _DECOMPOSED.get(func)
    if found is None:
        namespace = dict(func.__globals__)
        for name in ("has_torch_function", "has_torch_function_unary", "has_torch_function_variadic"):
            namespace[name] = lambda *args: False
        found = types.FunctionType(func.__code__, namespace, func.__name__, func.__defaults__, func.__closure__)
        found.__kwdefaults__ = func.__kwdefaults__
        _DECOMPOSED[func] = found
    return found


def _skip_as_frame(method) -> None:
    """Tell dynamo (where a compiled model may run: it is imported) not to compile
    ``method`` as a frame of its own.  It inlines the mode's method where it traces a
    model; compiling it as a frame after each graph break only recompiled it per argument
    type up to its limit, with a logged warning, for nothing (the bits are the same)."""
    dynamo = sys.modules.get("torch._dynamo")
    skip = getattr(getattr(dynamo, "eval_frame", None), "skip_code", None)
    if skip is not None:
        skip(method.__code__)


#: the torch functions the mode has seen pass through, and always will: none of its cases
#: (products, composites, backward passes, recurrent layers, functions out of reach or
#: rounded elementwise) -- what they are, not their arguments, decides it, so the mode's
#: first step on them is a set lookup
_PLAIN: set = set()
#: a bound on it (torch hands over its functions, a few hundred; a bound method of some
#: object would otherwise be kept alive)
_PLAIN_MAX = 4096


def _plain(func) -> bool:
    """Whether ``func`` is none of the mode's cases, whatever its arguments."""
    return (func not in _COMPOSITES and func not in _BACKWARDS and func not in _recurrent.KINDS
            and func not in _recurrent.CELLS and func not in ELEMENTWISE and func not in _amp.NANMEAN
            and _ops.passes_through(func))


class _Mode(TorchFunctionMode):
    """Routes torch's product functions to the emulation; everything else runs as is."""

    def __init__(self, emulation: Emulation):
        super().__init__()
        self.emulation = emulation
        self.warned = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func in _PLAIN and self.emulation._widths is None:  # nothing to decide: torch's own (most
            # calls of a step: attribute reads, ...); an autocast recipe's account follows every call
            return func(*args, **kwargs) if kwargs else func(*args)
        kwargs = kwargs or {}
        em = self.emulation
        # an optimizer's own products (LBFGS's dots, Muon's Newton-Schulz products) are its
        # arithmetic in its tensors' dtype, as its updates are: torch's, not the recipe's
        name = _ops.FUNCTIONS.get(func)
        if name is not None and em._steps.active:
            name = None
        if name is not None:
            try:
                result = _emulated(name, args, kwargs, em)
            except TypeError as exc:
                if func not in _OPERATORS:
                    raise
                # a @ b hands Tensor.matmul (b.__rmatmul__ its own) to the mode, and torch's
                # operator turns a TypeError into "unsupported operand type(s) for @": keep the message
                raise RuntimeError(str(exc)) from exc
            if result is not NotImplemented:
                if em._widths is not None:  # an activation (autocast's float16 product)
                    em._widths.mark(result)
                return result
        elif func in _COMPOSITES:
            if func is _LINEAR_CROSS_ENTROPY:
                kwargs = {**kwargs, "options": None}  # its definition, not torch's chunked Function
            with self:  # back on the stack for the calls inside
                return _decomposed(func)(*args, **kwargs)
        elif func in _BACKWARDS:
            # a backward started by Tensor.backward would run with the mode popped (as
            # during any __torch_function__): Python code autograd runs -- activation
            # checkpointing's recompute, custom Functions' backward -- would leave the
            # emulation.  Back on the stack, autograd's thread-local state carries it there.
            with self:
                return _decomposed(func)(*args, **kwargs)
        elif func in _recurrent.KINDS:
            if em._widths is not None and len(args) == 9:
                # the state: (input, hx, params, ...) dense, (data, batch_sizes, hx, ...) packed
                dense = isinstance(args[1 if _recurrent.KINDS[func][0] == "lstm" else 2], (tuple, list))
                args = _narrow_states(args, em, 1 if dense else 2)
            with self:
                result = _recurrent.run(func, args, kwargs)
            if result is not None:
                return result
        elif func in _recurrent.CELLS:
            if em._widths is not None:
                args = _narrow_states(args, em, 1)
            with self:
                return _recurrent.cell(func, args, kwargs)
        elif func in _amp.NANMEAN and em._widths is not None and not em._steps.active and args \
                and em._widths.is_narrow(args[0]) and kwargs.get("dtype") is None and kwargs.get("out") is None:
            with self:  # an activation's: ATen's composite, each step through the account
                return _amp.nanmean(*args, **kwargs)
        opaque = _ops.out_of_reach(func, args, kwargs) if func not in self.warned else None
        if opaque is not None:
            self.warned.add(func)
            warnings.warn(f"{opaque} runs its matrix products inside one torch kernel: they are not "
                          f"emulated under softfloat.torch.emulate (torch's own arithmetic)", stacklevel=2)
        elif len(_PLAIN) < _PLAIN_MAX and _plain(func):
            _PLAIN.add(func)
        result = func(*args, **kwargs)
        if not em.elementwise or em._steps.active:
            return result
        written = in_place(args, kwargs, result)
        rounds = func in ELEMENTWISE
        if em._widths is not None:  # an autocast recipe: rounded where AMP's dtype is float16
            ran = result
            result, verdict = em._widths.follow(func, args, kwargs, result, written)
            rounds = verdict == "cast" or (rounds and verdict == "narrow")
            written = written and result is ran  # (not where a cast gave an alias)
        if rounds and isinstance(result, tuple):  # var_mean, std_mean: each rounded
            result = type(result)(_rounded(t, em, False) if _roundable(t) else t for t in result)
        elif rounds and _roundable(result):
            result = _rounded(result, em, written)
        else:
            return result
        if em._widths is not None:
            em._widths.mark(result)
        return result


def _roundable(t) -> bool:
    """Whether ``t`` is a tensor with values to round: real float or complex."""
    return isinstance(t, torch.Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex) \
        and t.device.type != "meta"


# The emulation's own work runs eagerly: inside a torch.compile'd model, dynamo breaks the
# graph around it rather than trace softfloat's numpy kernels (which it would rewrite into
# torch operations that do not exist for unsigned integers).
@eager
def _emulated(name, args, kwargs, em):
    with torch._C.DisableTorchFunction():
        return _ops.dispatch(name, args, kwargs, em._runner, em._round)


def _narrow_states(args, em, at: int):
    """``args`` with the recurrent state at ``at`` (a tensor or a tuple of them) rounded
    into the activations format and marked narrow: autocast casts a recurrent layer's or
    cell's states into its dtype (an autocast recipe's account, :mod:`._amp`)."""
    def narrow(t):
        if not isinstance(t, torch.Tensor) or not t.dtype.is_floating_point or em._widths.is_narrow(t):
            return t
        t = _rounded(t, em, False)
        em._widths.mark(t)
        return t
    if len(args) <= at:
        return args
    state = args[at]
    state = type(state)(narrow(t) for t in state) if isinstance(state, (tuple, list)) else narrow(state)
    return (*args[:at], state, *args[at + 1:])


@eager
def _rounded(result, em, written: bool):
    """``result`` rounded (straight-through); a tensor an in-place call wrote into is
    overwritten with its rounding (autograd records the copy)."""
    with torch._C.DisableTorchFunction():
        rounded = em._round(result)
        return result.copy_(rounded) if written else rounded
