"""A recommendation told in plain sentences: the answer, the leaderboard, and why each learner was tested when it was.

The report (:func:`algorank.report.recommend_report`) reads top-down with these: :func:`answer_lines` first (the best
model, its score, how to use it), then :func:`leaderboard_rows` (one row per learner, best first), then
:func:`decision_sentences` (one sentence per test); the policy's formula and numbers go below them, folded away.
"""

from __future__ import annotations

import math

from algorank.metadata.learners import short_name
from algorank.metadata.metric import METRICS, from_score
from algorank.metadata.text import format_seconds
from algorank.recommender.live.outcome import earlier_tests, outcome, retest_reason

__all__ = ["answer_lines", "leaderboard_rows", "decision_sentences", "formula_text"]


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def answer_lines(rec) -> list[str]:
    """The answer in a few sentences: the best model and its score, how it was found, and how to use it."""
    m = rec.metric
    label = METRICS[m].label
    best = rec.best
    if rec.trace is None:
        return ["Dry run: nothing was tested; the plan below is the order the strategy would follow."]
    if best is None:
        return ["No learner finished successfully, so there is no model to recommend.", rec.summary]
    obs = list(rec.trace.observations)
    k = next(i for i, o in enumerate(obs) if o is best)
    found = float(rec.trace.cumulative_seconds[k])
    name = short_name(best.learner)
    name = name if name == best.learner else f"{name} ({best.learner})"
    lines = [f"Best model: {name}, {label} "
             f"{from_score(m, best.accuracy):.4f} in {rec.cv}-fold cross-validation "
             f"({'higher' if METRICS[m].higher_is_better else 'lower'} is better), found by test {k + 1} of "
             f"{len(obs)} after {format_seconds(found)} of tests."]
    chosen = getattr(rec, "ensemble", None)
    if chosen and chosen.get("kept") and rec.model is not None:
        from algorank.recommender.live.ensemble import weights_text

        parts = weights_text(chosen["weights"])
        lines.append(f"The model returned is a weighted ensemble of {len(chosen['weights'])} tested learners, chosen "
                     f"by greedy ensemble selection over their out-of-fold predictions ({parts}): {label} "
                     f"{from_score(m, chosen['score']):.4f} out of fold, against "
                     f"{from_score(m, best.accuracy):.4f} for the best learner alone (the ensemble's value is "
                     "measured on the rows it was chosen on, so it is optimistic).")
    if rec.saved_model:
        lines.append(f"To use it: the model refitted on all the data is saved in {rec.saved_model}; "
                     f"joblib.load('{rec.saved_model}').predict(X_new) gives predictions for new rows with the same "
                     "columns (load only files you trust).")
    elif rec.model is not None:
        lines.append("To use it: the learner was refitted on all the data; in Python, result.model.predict(X_new) "
                     "gives predictions for new rows with the same columns; to keep it in a file, run with "
                     "--save-model model.joblib (save_model= in Python).")
    else:
        lines.append("To use it: run the command again with --save-model model.joblib (in Python, the result of "
                     "algorank.recommend(..., refit=True) has it as .model), then "
                     "joblib.load('model.joblib').predict(X_new); or fit the learner named above yourself.")
    return lines


def leaderboard_rows(rec) -> list[dict]:
    """One row per learner tested: its best test (a successful one first), ranked best first; learners without a
    result follow in the order they were tested.  Keys: ``rank`` (None without a result), ``learner``, ``short``,
    ``score`` (the metric's own value), ``seconds``, ``status``, ``tests``."""
    if rec.trace is None:
        return []
    m = rec.metric
    by: dict = {}
    for o in rec.trace.observations:
        by.setdefault(o.learner, []).append(o)
    ok, rest = [], []
    for learner, tests in by.items():
        good = [t for t in tests if t.status == "ok" and t.accuracy == t.accuracy]
        if good:
            t = max(good, key=lambda t: t.accuracy)
            ok.append({"learner": learner, "short": short_name(learner), "score": from_score(m, t.accuracy),
                       "raw": t.accuracy, "seconds": t.seconds, "status": "ok", "tests": len(tests)})
        else:
            t = tests[-1]
            rest.append({"learner": learner, "short": short_name(learner), "score": math.nan, "raw": math.nan,
                         "seconds": t.seconds, "status": outcome(t), "tests": len(tests)})
    ok.sort(key=lambda r: -r["raw"])
    for i, r in enumerate(ok, 1):
        r["rank"] = i
    for r in rest:
        r["rank"] = None
    return ok + rest


def _result(o, metric: str) -> str:
    word = outcome(o)
    if word == "ok":
        return f"it scored {from_score(metric, o.accuracy):.4f} in {format_seconds(o.seconds)}"
    if word == "screened":
        return f"it was screened: {o.message} ({format_seconds(o.seconds)})"
    if word == "stopped at its limit":
        return f"it was stopped at its limit after {format_seconds(o.seconds)}"
    return f"it failed with an error ({o.message})" if o.message else "it failed with an error"


def decision_sentences(rec) -> list[str]:
    """One plain sentence per test: why the strategy took that learner then, and what came of it."""
    if rec.trace is None:
        return []
    m = rec.metric
    obs = list(rec.trace.observations)
    decisions = rec.test_decisions()
    out = []
    best = math.nan
    for i, o in enumerate(obs):
        d = decisions[i] if i < len(decisions) else {}
        name = short_name(o.learner)
        e, es = d.get("expected", math.nan), d.get("expected_seconds", math.nan)
        within = f" in a test expected to take {format_seconds(es)}" if _finite(es) else ""
        earlier = earlier_tests(obs, i)
        if earlier:
            why = d.get("text") or retest_reason(earlier)
            text = f"{name} was tested again ({why})"
        elif _finite(e) and _finite(best):
            gap = 100.0 * (e - best)
            now = f"{from_score(m, best):.4f}"
            if gap > 0.05:
                text = (f"{name} was tested next because it was expected to beat the best so far ({now}) by "
                        f"{gap:.1f} points{within}")
            else:
                text = (f"{name} was tested next: expected {-gap:.1f} points below the best so far ({now}), but with "
                        f"the best chance left of beating it for the time it costs{within}")
        elif _finite(e) or _finite(es):
            # before any result the strategy's absolute expectation is rough (see the plan): say what decided
            text = (f"{name} was tested {'first' if i == 0 else 'next'}: with nothing measured yet, it promised the "
                    f"most expected gain over the majority class for the time it costs{within}")
        else:
            text = f"{name} was tested {'first' if i == 0 else 'next'}: {d.get('text') or 'chosen by the strategy'}"
        out.append(f"{text}; {_result(o, m)}.")
        if o.status == "ok" and o.accuracy == o.accuracy:
            best = o.accuracy if not _finite(best) else max(best, o.accuracy)  # scores: higher is better
    return out


def formula_text(rec) -> str:
    """What the policy's score in the decisions' details means, with the strategy's own cost exponent."""
    ps = {d.get("p") for d in rec.decisions if _finite(d.get("p"))}
    p = f"{next(iter(ps)):g}" if len(ps) == 1 else "p"
    return ("Each step takes the learner with the highest score (1 - p(fail)) x EI / seconds^" + p + ": p(fail) is "
            "the predicted probability that its test fails, EI the expected improvement of the score over the best so "
            "far under the strategy's model of this dataset (conditioned on the tests before it), and seconds the "
            "predicted time of its test, raised to the cost exponent " + p + " (1 divides by the seconds; smaller "
            "values lean towards accuracy). A strategy with a fixed order takes the next learner of that order.")
