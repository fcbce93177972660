"""Display labels shared by strategy names, tables, JSON and plots."""

from __future__ import annotations

__all__ = ["format_p"]


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
