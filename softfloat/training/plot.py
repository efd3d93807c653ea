"""Figures of training reports (needs matplotlib: ``pip install "softfloat-emu[plot]"``).

matplotlib is imported only here, inside the functions, with the Agg backend (files, no
window).
"""

from __future__ import annotations

import numpy as np

from .. import _validate

__all__ = ["require_matplotlib", "save"]

_FP16_SUBNORMAL_LOW, _FP16_NORMAL_LOW, _FP16_MAX_EXP = -24, -14, 15


def require_matplotlib():
    """matplotlib.pyplot with the Agg backend, or an ImportError naming the extra.

    >>> from softfloat.training import plot
    >>> plot.require_matplotlib().__name__
    'matplotlib.pyplot'
    """
    try:
        import matplotlib
    except ImportError:
        raise ImportError(f"plotting needs matplotlib, which is not installed: {_validate.install_hint('plot')}") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save(reports, path: str) -> None:
    """Three panels -- loss curves, loss-scale trajectories, and the exponent histogram of
    the (unscaled) activation gradients against fp16's subnormal and normal ranges --
    written to ``path``.

    >>> import os, tempfile
    >>> from softfloat.training import run, plot
    >>> r = run("O2", epochs=1)
    >>> path = os.path.join(tempfile.mkdtemp(), "o2.png")
    >>> plot.save([r], path); os.path.getsize(path) > 0
    True
    """
    plt = require_matplotlib()
    fig, (ax_loss, ax_scale, ax_hist) = plt.subplots(1, 3, figsize=(15, 4.2))
    for r in reports:
        ax_loss.plot(r.losses, label=r.policy.name, lw=1)
        ax_scale.plot(r.loss_scales, label=r.policy.name, lw=1)
        counts = r.histograms["activation_grads"].counts
        if counts:
            exps = np.array(sorted(counts))
            total = sum(counts.values())
            ax_hist.step(exps, [counts[e] / total for e in exps], where="mid", label=r.policy.name)
    ax_loss.set(xlabel="step", ylabel="loss", title="loss")
    ax_scale.set(xlabel="step", ylabel="loss scale", yscale="log", title="loss scale")
    ax_hist.axvspan(-60, _FP16_SUBNORMAL_LOW, color="red", alpha=0.12, label="zero in fp16")
    ax_hist.axvspan(_FP16_SUBNORMAL_LOW, _FP16_NORMAL_LOW, color="orange", alpha=0.15, label="fp16 subnormal")
    ax_hist.axvspan(_FP16_NORMAL_LOW, _FP16_MAX_EXP + 1, color="green", alpha=0.08, label="fp16 normal")
    ax_hist.set(xlabel="log2 |activation gradient| (unscaled)", ylabel="share of non-zero values",
                title="activation gradient exponents", xlim=(-50, 20))
    for ax in (ax_loss, ax_scale, ax_hist):
        ax.legend(fontsize=7)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100)
    except OSError as exc:
        raise OSError(f"cannot write --plot {path!r}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)
