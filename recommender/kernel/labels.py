"""Display labels shared by strategy names, tables, JSON and plots (and the tick labels of their time axes)."""

from __future__ import annotations

__all__ = ["format_p", "log_time_axis"]


def format_p(p: float) -> str:
    """Display the A3R exponent P as the paper does: ``0``, ``1``, ``1/64``, or a decimal.

    ``1/n`` when ``1 / P`` is exactly an integer ``n > 1``, else ``f"{P:g}"``; the one formatter
    of P (strategy names ``ar:p=1/64``, tune-p tables and JSON, the MIL boxplot ticks).
    """
    p = float(p)
    if p == 0:
        return "0"
    if p == 1:
        return "1"
    inv = 1.0 / p
    if inv == round(inv) and abs(inv) < 2**53:
        return f"1/{int(round(inv))}"
    return f"{p:g}"


def log_time_axis(ax, *, label: str = "time (s, log scale)") -> None:
    """A log-scale seconds axis whose tick labels never collide.

    Plain numbers (``0.1``, ``2``, ``50``); ticks at 1, 2, 3, 5 and 7 times the powers of ten within
    about a decade, at 1, 2 and 5 over at most three decades, at the powers of ten beyond; no minor
    labels.  Call it after the data are drawn (it reads the axis limits).
    """
    import numpy as np
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    lo, hi = ax.get_xlim()
    decades = np.log10(max(hi, 1e-12) / max(lo, 1e-12))
    subs = (1.0, 2.0, 3.0, 5.0, 7.0) if decades <= 1.2 else (1.0, 2.0, 5.0) if decades <= 3 else (1.0,)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(label)

