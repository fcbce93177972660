"""Critical-difference diagram (Demsar 2006) drawn from a post hoc result.

The plot computes no statistics: the groups (bars joining learners that are
*not* significantly different) come from the ``significant`` matrix of the post
hoc result that was actually used, so they match Holm, Shaffer or
Bergmann-Hommel decisions as well as Nemenyi's.  The CD bar is drawn only for
procedures that have one (Nemenyi, Bonferroni-Dunn on complete data).  With missing
cells (a Multi2Test result whose omnibus test was Durbin or Skillings-Mack) the
positions are the rescaled average ranks and the title names the test.
"""

from __future__ import annotations

import numpy as np

from algorank.metadata.errors import InputError

__all__ = ["plot_cd", "cd_groups"]


def cd_groups(average_ranks, significant) -> list[tuple[int, ...]]:
    """Maximal runs of rank-adjacent learners with no significant pair among them.

    Parameters
    ----------
    average_ranks : array_like of shape (k,)
    significant : array_like of bool, shape (k, k)

    Returns
    -------
    list of tuple of int
        Learner indices of each group (sorted by rank), groups of size >= 2 only,
        none contained in another.
    """
    r = np.asarray(average_ranks, dtype=float)
    sig = np.asarray(significant, dtype=bool)
    order = list(np.argsort(r, kind="stable"))
    k = len(order)
    spans = []
    for a in range(k):
        b = a
        while b + 1 < k and not any(sig[order[b + 1], order[c]] for c in range(a, b + 1)):
            b += 1
        if b > a:
            spans.append((a, b))
    maximal = [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]
    return [tuple(int(order[i]) for i in range(a, b + 1)) for a, b in maximal]


def _unpack(result):
    """(average_ranks, significant, labels, cd, title) from a PosthocResult or a Multi2TestResult."""
    omnibus = ""
    if hasattr(result, "friedman") and hasattr(result, "posthoc"):  # Multi2TestResult
        ranks = np.asarray(result.friedman.average_ranks, dtype=float)
        labels = tuple(result.labels)
        ph = result.posthoc
        omnibus = str(getattr(result.friedman, "method", "Friedman")).split(" (")[0]
        if ph is None:
            return ranks, np.zeros((len(ranks), len(ranks)), bool), labels, None, \
                f"{omnibus} did not reject: no post hoc test (one group)"
        result = ph
    if not all(hasattr(result, a) for a in ("average_ranks", "significant")):
        raise InputError("plot_cd needs a post hoc result (evaluation.stats.posthoc) or a Multi2Test result")
    ranks = np.asarray(result.average_ranks, dtype=float)
    labels = tuple(getattr(result, "labels", ()) or (str(i) for i in range(len(ranks))))
    method = getattr(result, "method", "")
    requested = getattr(result, "requested", method)
    title = f"{method} (alpha = {getattr(result, 'alpha', float('nan')):g}, N = {getattr(result, 'n_datasets', '?')})"
    if requested != method:
        title += f"; {requested} fell back to {method}"
    if omnibus and not omnibus.startswith("Friedman"):
        title += f"; {omnibus} (missing cells), rescaled average ranks"
    return ranks, np.asarray(result.significant, bool), labels, getattr(result, "critical_difference", None), title


def plot_cd(result, *, ax=None, label_formatter=None):
    """Draw a critical-difference diagram.

    Parameters
    ----------
    result : PosthocResult or Multi2TestResult
        The post hoc result actually used (a Multi2Test result contributes its
        ``posthoc`` and Friedman average ranks).
    ax : matplotlib Axes, optional
        Drawn on a new figure when None.
    label_formatter : callable, optional
        Maps a learner label to the text shown (e.g. ``metadata.short_name``).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib

    if ax is None:
        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt

        ranks0, *_ = _unpack(result)
        fig, ax = plt.subplots(figsize=(9, 1.6 + 0.28 * len(ranks0)))
    ranks, sig, labels, cd, title = _unpack(result)
    fmt = label_formatter or (lambda s: s)
    k = len(ranks)
    order = np.argsort(ranks, kind="stable")
    lo, hi = 1, max(k, int(np.ceil(ranks.max())))
    ax.set_xlim(lo - 0.5, hi + 0.5)
    half = (k + 1) // 2
    n_rows = half + 1
    ax.set_ylim(n_rows + 1.5, -1.2)
    ax.axis("off")
    # axis
    ax.hlines(0, lo, hi, color="black", lw=1)
    for t in range(lo, hi + 1):
        ax.vlines(t, -0.15, 0, color="black", lw=1)
        ax.text(t, -0.25, str(t), ha="center", va="bottom", fontsize=8)
    # learners: best half on the left, the rest on the right
    for pos, idx in enumerate(order):
        x = ranks[idx]
        if pos < half:
            y, tx, ha = pos + 1.0, lo - 0.4, "left"
        else:
            y, tx, ha = (k - pos), hi + 0.4, "right"
        ax.vlines(x, 0, y, color="black", lw=0.8)
        ax.hlines(y, min(x, tx), max(x, tx), color="black", lw=0.8)
        ax.text(tx, y - 0.08, f"{fmt(labels[idx])} ({x:.2f})", ha=ha, va="bottom", fontsize=8)
    # groups of not-significantly-different learners
    for g, members in enumerate(cd_groups(ranks, sig)):
        xs = ranks[list(members)]
        y = 0.25 + 0.18 * g
        ax.hlines(y, xs.min() - 0.03, xs.max() + 0.03, color="tab:red", lw=3)
    if cd is not None:
        ax.hlines(-0.9, lo, lo + cd, color="black", lw=1.5)
        ax.vlines([lo, lo + cd], -1.0, -0.8, color="black", lw=1.5)
        ax.text(lo + cd / 2, -0.95, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_title(title, fontsize=9)
    from algorank.metadata.text import literal_text

    literal_text(ax)  # learner ids from data: a `$` is a dollar sign
    return ax
