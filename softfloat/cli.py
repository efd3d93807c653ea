"""The ``softfloat`` command line: list formats, explain one rounding, quantise a .npy file
or a checkpoint, train the lab's MLP.

A thin argparse layer over the library: every number is computed by :mod:`softfloat`;
this module parses, prints, shows progress on stderr, and turns the library's
TypeError/ValueError/OSError (and the ImportError of a missing optional dependency) into
a one-line ``softfloat: error: ...`` and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from . import _checkpoint, _checkpoint_read, _exact, _validate
from ._checkpoint_write import atomic_output
from ._version import __version__
from .attributes import RoundingAttributes
from .explain import explain, parse_operation
from .formats import aliases, as_format, catalogue
from .rounding import Rounding, Tininess, as_rounding, as_tininess

__all__ = ["main"]

_EPILOG = """\
examples:
  softfloat formats
  softfloat explain 6.36                        # the exact decimal 6.36 into fp32
  softfloat explain 0.1 --format bf16 --rounding toward_zero
  softfloat explain -1e-5 --format fp16         # negative values need no quoting
  softfloat explain 1/3 --format e4m3 --json
  softfloat explain "2048 + 1" --format fp16    # one operation: +, -, *, /, sqrt(x), fma(a, b, c)
  softfloat quantize w.npy w_bf16.npy --format bf16
  softfloat quantize x.npy x_e4m3.npy --format e4m3 --saturate --bits
  softfloat quantize w.npy w_e6m9.npy --format e6m9   # a custom format: 6 exponent, 9 mantissa bits
  softfloat quantize model.safetensors model_fp8.safetensors --format fp8_e4m3 --scaling tensor
  softfloat quantize weights.npz weights_bf16.npz --format bf16 --report report.json
  softfloat quantize model.safetensors model_fp6.pt --format fp6_e2m3 --saturate
  softfloat train --policy O2 --epochs 5 --report o2.json --plot o2.png
  softfloat train --compare fp32,O1,O2,O3,bf16,fp8

'python -m softfloat' is the same command.
"""

#: explain's options that take a value (the token after them is never the VALUE)
_VALUE_OPTIONS = frozenset({"-f", "--format", "-r", "--rounding", "--tininess", "--seed"})


class _UsageError(Exception):
    """A command-line mistake argparse found; main() prints it as one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would print usage lines and exit
        raise _UsageError(f"{message} (see '{self.prog} --help')")


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status.

    0 on success, 2 on a bad argument, an unknown format or rounding mode, a value that is
    not a number, or a file that cannot be read or written (one line on stderr, no
    traceback).

    Examples
    --------
    >>> main(["explain", "3.5", "--format", "fp4_e2m1"])  # doctest: +ELLIPSIS
    3.5 -> fp4_e2m1 (rounding=nearest_even)
    ...
      bits      0 11 0  (0x6)
    ...
      rounding  guard=1, round=0, sticky=0: exact tie, rounds to even (up)
    ...
    0
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = _build_parser().parse_args(_protect_negative_value(argv))
    except _UsageError as exc:
        return _fail(str(exc))
    except SystemExit as exc:  # --help and --version print and exit
        return exc.code if isinstance(exc.code, int) else 0
    try:
        return args.command(args)
    except BrokenPipeError:  # `softfloat formats | head`: the reader left early
        _discard_stdout()
        return 0
    except (TypeError, ValueError, OSError) as exc:
        return _fail(str(exc))
    except ImportError as exc:  # a missing optional dependency: name the extra, no traceback
        return _fail(_missing_dependency(exc))
    except KeyboardInterrupt:  # Ctrl-C: outputs were written atomically, nothing half-done is left
        print("softfloat: interrupted (no output was left half-written)", file=sys.stderr)
        return 130


#: top-level module -> the extra that installs it
_EXTRAS = {"matplotlib": "plot", "torch": "torch", "tqdm": "lab", "sklearn": "lab", "dask": "dask",
           "safetensors": "test", "ml_dtypes": "test", "hypothesis": "test"}


def _missing_dependency(exc: ImportError) -> str:
    """The one-line message for an ImportError: the library's own where it names the
    extra already, else the module and the extra that installs it."""
    text = str(exc)
    if "pip install" in text:
        return text
    module = (exc.name or "").split(".")[0]
    extra = _EXTRAS.get(module)
    fix = _validate.install_hint(extra) if extra else "install it, then run the command again"
    return f"an optional dependency is missing ({text}): {fix}"


def _discard_stdout() -> None:
    """Point stdout at devnull so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _fail(message: str) -> int:
    print(f"softfloat: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


# =====================================================================================
# the parser
# =====================================================================================
def _build_parser() -> _Parser:
    parser = _Parser(prog="softfloat", description="Bit-exact emulation of IEEE 754 and ML float formats.",
                     epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"softfloat {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    formats = commands.add_parser("formats", help="list the formats and their limits",
                                  description="List the catalogue: layout, bias and limits.")
    formats.set_defaults(command=_run_formats)

    ex = commands.add_parser(
        "explain", help="show how one value rounds into a format, bit by bit",
        description="Show the exact input, the result's bits and fields, the two "
                    "neighbours, the guard/round/sticky bits, the error and the flags -- of "
                    "one value, or of one operation such as \"2048 + 1\".",
        epilog="VALUE is read exactly: '6.36' is the decimal 6.36, not the float nearest "
               "to it. Hex floats (0x1.8p-3), ratios (1/3), inf and nan work too. An "
               "operation (\"2048 + 1\", \"0.1 * 3\", \"1 / 3\", \"sqrt(2)\", "
               "\"fma(1.5, 2, -3)\") first rounds its operands into the format, then shows "
               "the exact result and how the operation rounded it; '1/3' without spaces is "
               "the ratio, one number.")
    ex.add_argument("value", metavar="VALUE",
                    help="the number, e.g. 6.36, -1e-5, 0x1p-3, 1/3, inf; or one operation, "
                         "e.g. \"2048 + 1\", \"sqrt(2)\", \"fma(a, b, c)\"")
    ex.add_argument("-f", "--format", default="fp32",
                    help="target format, e.g. bf16, e4m3 or a layout such as e6m9 (default fp32)")
    _rounding_options(ex)
    ex.add_argument("--json", action="store_true", help="print the explanation as JSON")
    ex.set_defaults(command=_run_explain)

    qz = commands.add_parser(
        "quantize", help="round a .npy array or every tensor of an .npz/.safetensors file into a format",
        description="Round every element of a .npy array, or every float tensor of an .npz "
                    "archive or a .safetensors checkpoint, into --format and save the result. "
                    "For a .npy file it prints the IEEE flags raised, what became of the values "
                    "(exact, rounded, became subnormal, became zero, saturated, became +-inf, "
                    "NaN) and the quantisation error (max and mean absolute and relative error, "
                    "SQNR in dB); for a checkpoint, one row per tensor: shape, the shares that "
                    "became zero, became subnormal and overflowed, the largest and mean relative "
                    "error and the SQNR.",
        epilog="OUT's extension decides what is written: .npy for a .npy IN (one array); "
               ".npz, .safetensors, .pt or .pth for a checkpoint; anything else, and OUT being "
               "IN (or a link to it), is refused before anything is read. OUT is written to a "
               "temporary file beside it and renamed over it only when complete: a failure "
               "(disk full, permission, Ctrl-C) leaves no partial file and an existing OUT as "
               "it was. "
               "Checkpoints are processed tensor by tensor, each in pieces of 2^20 elements "
               "(a .safetensors input is memory-mapped; an .npz member is read whole), with a "
               "progress bar on stderr when it is a terminal (tqdm if installed, else one line "
               "per tensor; --no-progress turns it off). Integer "
               "and bool tensors are copied unchanged. A .safetensors output stores bit "
               "patterns in the dtype a reader expects (F16, BF16, F8_E4M3, F8_E5M2, "
               "F8_E4M3FNUZ, F8_E5M2FNUZ, F32, F64) and otherwise as unsigned integers (U8, "
               "U16, ...) listed in the metadata key softfloat.bit_patterns, with the format "
               "in softfloat.format; an .npz output stores values as quantize returns them, or "
               "bit patterns with --bits (and the format in a member __softfloat__); a .pt/.pth "
               "output (needs torch) is a flat dict of tensors for torch.load, in the torch "
               "dtype where there is one (bf16, fp16, fp32, fp64, float8_e4m3fn, float8_e5m2, "
               "the fnuz pair), else bit patterns as uint8/int16/int32 listed in its entry "
               "__softfloat__; softfloat.load_checkpoint(OUT) reads any of them back as values. "
               "In the per-tensor table the error figures (max and mean relative error, SQNR) "
               "are over the finite elements only: a figure marked * leaves out the number of "
               "elements in the 'left out' column (infinite or NaN input, or a result that "
               "overflowed), so read it beside the overflow share. "
               "--scaling tensor (formats of 8 bits or fewer) is softfloat.scaled_encode's per-tensor "
               "recipe: x * scale (the exact product) rounded once, with scale = "
               "fp32(format max / amax) as Transformer Engine computes it (amax the largest "
               "finite |x|; 1 for an all-zero tensor), stored beside each tensor as "
               "NAME_scale: x ~ decoded / scale. The scale is rounded to nearest, so amax * "
               "scale may exceed max by one float32 rounding: with --rounding upward, "
               "downward or stochastic add --saturate (as Transformer Engine's casts do) to keep "
               "the largest element finite. In "
               "--report JSON, NaN is null and infinities are the strings \"inf\"/\"-inf\".")
    qz.add_argument("input", metavar="IN", help="a .npy array, an .npz archive, a .safetensors file "
                                                 "or a torch.save checkpoint (.pt)")
    qz.add_argument("output", metavar="OUT",
                    help="where to write the result: a .npy file for a .npy input; an .npz, "
                         ".safetensors or .pt/.pth file (by its extension) for the others")
    qz.add_argument("-f", "--format", required=True,
                    help="target format, e.g. bf16, e4m3 or a layout such as e6m9")
    _rounding_options(qz)
    qz.add_argument("--bits", action="store_true",
                    help="save the encoded bit patterns (unsigned ints) instead of values")
    qz.add_argument("--scaling", default="none", choices=("none", "tensor"),
                    help="tensor: scale each tensor so its largest finite magnitude maps to the "
                         "format's max, and store the scale (checkpoints into formats of 8 bits "
                         "or fewer only)")
    qz.add_argument("--report", metavar="REPORT.json",
                    help="also write the per-tensor rows as JSON")
    qz.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    qz.set_defaults(command=_run_quantize)

    tr = commands.add_parser(
        "train", help="train a small MLP on the digits under a mixed-precision policy",
        description="Train a 64-128-10 MLP on scikit-learn's handwritten digits with every "
                    "product, accumulation and update rounded as the policy says, then print "
                    "accuracy, loss, the share of underflowed gradients, the share of swamped "
                    "updates, skipped steps and the final loss scale. Needs "
                    "'pip install \"softfloat-emu[lab]\"' for the digits and the progress bar "
                    "(a synthetic data set stands in without scikit-learn).")
    tr.add_argument("--policy", default="O2",
                    help="fp32, O1, O2, O3, bf16, bf16-pure, fp8, fp8-current, fp8-block or mxfp8 "
                         "(default O2)")
    tr.add_argument("--compare", metavar="P1,P2,...", default=None,
                    help="run several policies on the same seed and print one table")
    tr.add_argument("--epochs", type=int, default=20, help="passes over the training set (default 20)")
    tr.add_argument("--loss-scale", default=None,
                    help="dynamic, none or a number such as 1024 (default: the policy's)")
    tr.add_argument("--update-rounding", default=None,
                    help="nearest_even or stochastic: how updates round into the weights "
                         "(default: the policy's)")
    tr.add_argument("--optimizer", default="sgd", help="sgd (momentum 0.9) or adam (default sgd)")
    tr.add_argument("--lr", type=float, default=None, help="learning rate (default 0.1 sgd, 0.001 adam)")
    tr.add_argument("--seed", type=int, default=0, help="fixes init, batching and stochastic rounding")
    tr.add_argument("--report", metavar="OUT.json", default=None, help="write the full report(s) as JSON")
    tr.add_argument("--plot", metavar="OUT.png", default=None,
                    help="draw loss curves, the loss-scale trajectory and the gradient exponent "
                         "histogram (needs matplotlib: pip install \"softfloat-emu[plot]\")")
    tr.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    tr.set_defaults(command=_run_train)
    return parser


def _rounding_options(sub: argparse.ArgumentParser) -> None:
    modes = ", ".join(m.value for m in Rounding)
    sub.add_argument("-r", "--rounding", default="nearest_even",
                     help=f"one of {modes} (default nearest_even)")
    sub.add_argument("--saturate", action="store_true",
                     help="overflow to +-max_finite instead of infinity (or NaN)")
    sub.add_argument("--flush-subnormals", action="store_true",
                     help="flush tiny results to zero (no subnormals)")
    sub.add_argument("--tininess", default=None,
                     help=f"when underflow is judged: {' or '.join(t.value for t in Tininess)} "
                          "rounding (default after)")
    sub.add_argument("--seed", type=int, default=None,
                     help="random seed for --rounding stochastic (without one, every run "
                          "draws fresh entropy)")


def _protect_negative_value(argv: list[str]) -> list[str]:
    """Let ``softfloat explain -1e-5`` (or ``-inf``) through: argparse would read such a
    VALUE as an unknown option, so move it behind a ``--``."""
    positional = [i for i, tok in enumerate(argv) if not tok.startswith("-")]
    if "--" in argv or not positional or argv[positional[0]] != "explain":
        return argv
    for i in range(positional[0] + 1, len(argv)):
        tok = argv[i]
        if tok.startswith("-") and argv[i - 1] not in _VALUE_OPTIONS and _is_number(tok):
            return argv[:i] + argv[i + 1:] + ["--", tok]
    return argv


def _is_number(token: str) -> bool:
    """A number, or an operation explain can take ('-1 + 2')."""
    try:
        _exact.parse_exact(token)
    except ValueError:
        try:
            return parse_operation(token) is not None
        except ValueError:
            return False
    return True


def _attributes(args) -> RoundingAttributes:
    """The rounding flags as one RoundingAttributes, checked and named as on the command
    line (--seed, the stochastic mode's, is checked here and passed on as ``rng``)."""
    rounding = as_rounding(args.rounding, "--rounding")
    _check_seed(args.seed)
    if args.seed is not None and rounding is not Rounding.STOCHASTIC:
        raise ValueError(_validate.seed_without_stochastic("--seed", "--rounding", rounding.value))
    tininess = None if args.tininess is None else as_tininess(args.tininess, "--tininess")
    return RoundingAttributes(rounding, tininess, subnormals=not args.flush_subnormals, saturate=args.saturate)


def _check_seed(seed) -> None:
    if seed is not None and seed < 0:
        raise ValueError(f"--seed must be an integer >= 0 (a numpy seed); got {seed}: use e.g. --seed 0")


# =====================================================================================
# the commands
# =====================================================================================
_COLUMNS = ("name", "bits", "exp", "man", "bias", "max", "min normal", "min subnormal",
            "epsilon", "specials")


def _run_formats(args) -> int:
    rows = [_COLUMNS] + [_format_row(f) for f in catalogue()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_COLUMNS))]
    for row in rows:
        cells = [c.ljust(w) if i in (0, len(row) - 1) else c.rjust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        print("  ".join(cells).rstrip())
    print()
    print("aliases:")
    aliases = _aliases()
    for f in catalogue():
        if aliases.get(f.name):
            print(f"  {f.name:<{widths[0]}}  {', '.join(aliases[f.name])}")
    print()
    print("exp/man: exponent and trailing-significand (mantissa) bits; max, min normal, "
          "min subnormal and epsilon (2^-man) to 8 significant digits")
    return 0


def _format_row(f) -> tuple[str, ...]:
    return (f.name, str(f.bits), str(f.exponent_bits), str(f.mantissa_bits), str(f.bias),
            _g(f.max_finite), _g(f.min_normal), _g(f.min_subnormal), _g(f.epsilon),
            f.specials.value)


def _g(v: float) -> str:
    return f"{v:.8g}"


def _aliases() -> dict[str, list[str]]:
    """Alternative names accepted for each catalogue format (from the name table)."""
    out: dict[str, list[str]] = {}
    for alias, fmt in aliases().items():
        out.setdefault(fmt.name, []).append(alias)
    return out


def _run_explain(args) -> int:
    _check_value(args.value)  # a non-number fails here, named as VALUE
    fmt = as_format(args.format, "--format")
    e = explain(args.value, fmt, attributes=_attributes(args), rng=args.seed)
    print(json.dumps(e.to_dict(), indent=2) if args.json else e)
    return 0


def _check_value(text: str) -> None:
    """VALUE must be a number or one operation; say so, naming it VALUE."""
    try:
        _exact.parse_exact(text, "VALUE")
    except ValueError as exc:
        if parse_operation(text, "VALUE") is None:
            raise ValueError(f"{exc}; or one operation such as \"2048 + 1\", \"sqrt(2)\" or "
                             "\"fma(1.5, 2, -3)\"") from None


def _run_quantize(args) -> int:
    fmt = as_format(args.format, "--format")
    attrs = _attributes(args)
    if args.report:
        _check_report(args.report, args.input, args.output)
    if _checkpoint_read.file_kind(args.input) != "npy":
        return _run_quantize_checkpoint(args, fmt, attrs)
    # one array: the same library path, which also hands back what the summary prints
    spec = _checkpoint.QuantizeSpec(fmt, attrs, args.seed, args.scaling, args.bits)
    rows, (flags, found, stats, dtype) = _checkpoint.quantize_file(args.input, args.output, spec)
    row = rows[0]
    what = "bit patterns" if args.bits else "values"
    print(f"{_validate.counted(row['count'])} of {row['dtype']} {tuple(row['shape'])} -> {fmt.name} "
          f"(rounding={attrs.rounding.value}): wrote {what} as {dtype} to {args.output}")
    print(flags.summary(found))
    print("quantisation error:")
    print("\n".join("  " + line for line in stats.summary().splitlines()))
    if args.report:
        _write_report(args, fmt, attrs, rows)
    return 0


def _run_quantize_checkpoint(args, fmt, attrs: RoundingAttributes) -> int:
    with _Progress(args, "quantize", unit="B") as bar:
        def tick(name, nbytes, total):
            bar.update(nbytes, total=total, item=name)

        # quantize_checkpoint's own path, its messages in the command line's words (IN, OUT)
        spec = _checkpoint.QuantizeSpec(fmt, attrs, args.seed, args.scaling, args.bits)
        rows, _ = _checkpoint.quantize_file(args.input, args.output, spec, progress=tick if bar.on else None)
    done = sum(r["action"] == "quantized" for r in rows)
    scaling = ", scaling=tensor" if args.scaling == "tensor" else ""
    print(f"{_validate.counted(len(rows), 'tensor')} of {args.input} -> {fmt.name} "
          f"(rounding={attrs.rounding.value}{scaling}): {done} quantised, "
          f"{len(rows) - done} kept; wrote {args.output}")
    print(_table(rows, args.scaling == "tensor"))
    if args.report:
        _write_report(args, fmt, attrs, rows)
    return 0


_TABLE = ("tensor", "shape", "dtype", "zero", "subnormal", "overflow", "max rel err",
          "mean rel err", "SQNR dB", "left out")


def _table(rows: list[dict], scaled: bool) -> str:
    """One line per tensor; shares in percent.  The error figures cover the finite elements
    only: where some were left out (infinite or NaN input or result) they carry a * and
    'left out' gives the count, so an overflow never hides behind an error of 0."""
    notes = any(r.get("note") for r in rows)
    head = _TABLE + (("scale",) if scaled else ()) + (("note",) if notes else ())
    lines = [head]
    marked = False
    for r in rows:
        cells = [r["name"], "x".join(map(str, r["shape"])) or "()", r["dtype"]]
        if r["action"] == "kept":
            cells += ["kept"] + [""] * (len(head) - 4 - notes)
        else:
            star = "*" if r["excluded"] else ""
            marked = marked or bool(star)
            cells += [_pct(r["became_zero"]), _pct(r["became_subnormal"]), _pct(r["overflowed"]),
                      _num(r["max_rel_error"], ".3g", star), _num(r["mean_rel_error"], ".3g", star),
                      _num(r["sqnr_db"], ".2f", star), str(r["excluded"]) if r["excluded"] else ""]
            if scaled:
                cells.append(f"{r['scale']:.6g}")
        if notes:
            cells.append(r.get("note") or "")
        lines.append(tuple(cells))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head))]
    text = "\n".join("  ".join(c.ljust(w) if i < 3 or i == len(head) - 1 and notes else c.rjust(w)
                               for i, (c, w) in enumerate(zip(line, widths))).rstrip()
                     for line in lines)
    if marked:
        text += ("\n* over the finite elements only: 'left out' elements (infinite or NaN input, "
                 "or a result that overflowed) are not in the error figures")
    return text


def _pct(v: float) -> str:
    return "-" if math.isnan(v) else f"{100 * v:.2f}%"


def _num(v: float, spec: str, star: str = "") -> str:
    return "-" if math.isnan(v) else format(v, spec) + star


def _check_report(report: str, *others: str) -> None:
    """Before any work: --report can be written, and is neither IN nor OUT."""
    _checkpoint.check_directory(report, "--report")
    for other in others:
        if os.path.abspath(report) == os.path.abspath(other) or _checkpoint.same_file(report, other):
            raise ValueError(f"--report {report!r} is {other!r}, a file quantize reads or writes; "
                             "give the report another name")


def _write_report(args, fmt, attrs: RoundingAttributes, rows: list[dict]) -> None:
    report = {"input": args.input, "output": args.output, "format": fmt.name,
              "rounding": attrs.rounding.value, "scaling": args.scaling,
              "tensors": [{k: _json_number(v) for k, v in r.items()} for r in rows]}
    _write_json(args.report, report, indent=2, allow_nan=False)


def _write_json(path: str, payload, **options) -> None:
    """--report files are written atomically too: complete, or not at all."""
    with atomic_output(path, "--report", mode="w") as fh:
        json.dump(payload, fh, **options)
        fh.write("\n")


def _json_number(v):
    """JSON has no NaN or infinity: NaN becomes null, infinities the strings 'inf'/'-inf'."""
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def _run_train(args) -> int:
    from . import training

    if args.epochs < 0:
        raise ValueError(f"--epochs must be >= 0; got {args.epochs}")
    _check_seed(args.seed)
    if args.lr is not None and not (math.isfinite(args.lr) and args.lr >= 0):  # named as the option
        raise ValueError(f"--lr must be a finite number >= 0; got {args.lr}")
    names = [n.strip() for n in args.compare.split(",") if n.strip()] if args.compare is not None else [args.policy]
    if not names:  # --compare "" ran --policy alone
        raise ValueError(f"--compare needs policy names separated by commas, such as fp32,O2; got {args.compare!r}")
    rounding = None if args.update_rounding is None else as_rounding(args.update_rounding, "--update-rounding")
    overrides = {} if rounding is None else {"update_rounding": rounding}
    policies = [training.as_policy(n, **overrides) for n in names]  # bad names fail before any work
    optimizer = _validate.one_of("--optimizer", args.optimizer, training.OPTIMIZERS)  # named as the option
    options = dict(epochs=args.epochs, seed=args.seed, optimizer=optimizer, lr=args.lr, loss_scale=args.loss_scale)
    if args.loss_scale is not None:
        training.as_policy(names[0], loss_scale=args.loss_scale)  # a bad value fails before any work
    if args.plot:
        training.plot.require_matplotlib()
    for path, label in ((args.report, "--report"), (args.plot, "--plot")):
        if path:
            _checkpoint.check_directory(path, label)
    reports = []
    for policy in policies:
        with _Progress(args, policy.name, unit="step", plain=False,
                       hint=f"training {policy.name} (pip install \"softfloat-emu[lab]\" for a progress bar)") as bar:
            def tick(rec):
                bar.update(1, total=_steps_per_run(training, args.epochs),
                           postfix=f"loss={rec['loss']:.3f}, scale={rec['loss_scale']:g}")

            reports.append(training.run(policy, progress=tick if bar.on else None, **options))
    table = training.Table(r.summary() for r in reports)
    print(table)
    if args.report:
        payload = reports[0].to_dict() if len(reports) == 1 else [r.to_dict() for r in reports]
        _write_json(args.report, payload)
    if args.plot:
        training.plot.save(reports, args.plot)
    return 0


def _steps_per_run(training, epochs: int) -> int:
    n = len(training.data.load().y_train)
    return epochs * -(-n // 64)


class _Progress:
    """The one progress display of every command, on stderr: a tqdm bar where tqdm is
    installed (the lab extra), else one plain line per item (``plain``) or, once, the
    ``hint``; nothing with --no-progress or when stderr is not a terminal (a log file or a
    pipe gets no bar).  ``on`` says whether anything is shown; ``update(n, total=...,
    item=..., postfix=...)`` advances it (the first update sets the bar's total)."""

    def __init__(self, args, desc: str, unit: str, plain: bool = True, hint: str | None = None):
        self.desc, self.unit, self.plain, self.hint = desc, unit, plain, hint
        self.on = not getattr(args, "no_progress", False) and _is_terminal(sys.stderr)
        self.bar = None
        self.done = 0

    def __enter__(self):
        if self.on:
            try:
                from tqdm import tqdm
            except ImportError:
                if self.hint:
                    print(self.hint, file=sys.stderr)
            else:  # shown at once; its total is set by the first update
                scaled = self.unit == "B"
                self.bar = tqdm(total=None, desc=self.desc, unit=self.unit, unit_scale=scaled,
                                unit_divisor=1024 if scaled else 1000, file=sys.stderr, leave=False)
        return self

    def update(self, n: int, *, total: int | None = None, item: str | None = None, postfix: str | None = None):
        self.done += n
        if self.bar is not None:
            if self.bar.total is None and total:
                self.bar.total = total
            self.bar.update(n)
            if item is not None or postfix is not None:
                self.bar.set_postfix_str(item if postfix is None else postfix, refresh=False)
        elif self.plain:
            share = f" ({100 * self.done / total:.0f}%)" if total else ""
            size = f"{_size(self.done)} of {_size(total)}" if self.unit == "B" and total else f"{self.done}"
            print(f"{self.desc}: {item or ''} {size}{share}".replace("  ", " "), file=sys.stderr, flush=True)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
        return False


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")
