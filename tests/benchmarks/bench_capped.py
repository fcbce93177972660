"""How large a cap for capped tests: a training-part simulation of several caps at once (run on demand).

Without a cap the benchmark charges a test its whole recorded time, however far that is above what the
strategy predicted: on LCDB's training part one dataset (1114) costs every strategy 9.6 hours this way (a
ridge classifier predicted at under a second runs for hours).  The ``ei`` family's ``cap`` stops such a test
(``eiu`` has ``cap=50``, chosen with this script).  This script replays the strategy *without* its own cap
(default ``eiu:cap=inf``) on the *training* part of a meta-dataset only (the frozen held-out datasets are
removed first) and measures its summed time to 1 point with every test stopped at ``cap x`` its predicted
seconds (at least ``--floor`` seconds), for several caps from one fit per dataset; the strategy with
``cap=C`` gives the same test sequences as the ``C`` row (compared on every 6th LCDB training dataset)::

    python tests/benchmarks/bench_capped.py --meta lcdb --caps inf 20 10 5
    python tests/benchmarks/bench_capped.py --meta oboe --every 8 --caps inf 10

Rules of the simulation, per training dataset (leave-one-dataset-out within the training part, the
strategy's own fast-path fit, live test times as in ``bench_field.py``):

* the strategy picks its next learner as usual; its predicted seconds for it are its point prediction
  times its observed live ratio (what its scores divide by);
* a test whose recorded seconds exceed the cap is stopped there: charged the cap, it finds nothing, and
  the strategy is told it failed (with 0 seconds, so that a lower bound does not enter its live ratio);
* when the strategy has nothing left to test, the stopped learners are tested again without a cap, in the
  order they were stopped, each charged its whole recorded time (the stopped attempt stays charged);
* the time to 1 point is the charged seconds up to the first test within 1 point of the dataset's best.

``--caps inf`` is no cap: its sum is the field table's ``eiu:cap=inf`` row.
Prints one row per cap: summed and median time to 1 point, x the oracle bound, datasets where a cap
fired, and W/T/L of the capped run against the uncapped one (5 % or 0.05 s ties, as the benchmark).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from algorank.api import load_meta, time_model_arrays  # noqa: E402
from algorank.metadata.splits import heldout  # noqa: E402
from algorank.recommender.ei import _attempted, _Prepared  # noqa: E402
from algorank.recommender.kernel.environments import SimulatedEnvironment, SkipUnavailable, meta_arrays  # noqa: E402
from algorank.recommender.kernel.threads import one_blas_thread  # noqa: E402
from algorank.recommender.kernel.trace import Observation, run_policy  # noqa: E402
from algorank.recommender.registry import parse_strategy  # noqa: E402

EPS = 0.01


class Requeue:
    """``--retry requeue``: hide stopped tests from the policy and raise the stopped learner's predicted seconds
    to what the stopped test proved (the cap), so that it stays a candidate at its new, higher price; its next
    test then has a ``cap x`` higher limit."""

    def __init__(self, policy, capped: "CappedEnvironment") -> None:
        self.policy, self.capped = policy, capped

    def next(self, history):
        shown = [o for o in history if o.message != "stopped at the cap"]
        return self.policy.next(shown)


class CappedEnvironment:
    """Stop a test at ``cap x`` the policy's predicted seconds (at least ``floor``); keep the real charges."""

    def __init__(self, env: SimulatedEnvironment, policy, cap: float, floor: float, *, requeue: bool = False) -> None:
        self.env, self.policy, self.cap, self.floor, self.requeue = env, policy, cap, floor, requeue
        self.fired = False
        self.charged: list[tuple[str, float, float, str]] = []  # learner, seconds, accuracy, status
        self.stopped: list[str] = []

    def limit(self, learner: str) -> float:
        if math.isinf(self.cap):
            return math.inf
        p = self.policy
        j = p.index[learner]
        predicted = float(p.seconds[j]) * p._ratio()
        if self.cap < 0:  # --z: the cap is 10 ** (z x the runtime model's residual spread of this learner)
            return max(10.0 ** (-self.cap * float(p.s.runtime_.sigma[j])) * predicted, self.floor)
        return max(self.cap * predicted, self.floor)

    def test(self, learner: str) -> Observation:
        o = self.env.test(learner)
        limit = self.limit(learner)
        if o.seconds > limit:
            self.charged.append((learner, limit, math.nan, "stopped"))
            if self.requeue:
                p = self.policy
                j = p.index[learner]
                p.seconds = p.seconds.copy()
                p.seconds[j] = max(float(p.seconds[j]), limit / p._ratio())
                self.fired = True
            else:
                self.stopped.append(learner)
            return Observation(learner, math.nan, 0.0, "timeout", "stopped at the cap")
        self.charged.append((learner, o.seconds, o.accuracy, o.status))
        return o

    def retry_stopped(self) -> None:
        for learner in self.stopped:
            o = self.env.test(learner)
            self.charged.append((learner, o.seconds, o.accuracy, o.status))


def time_to_eps(charged, best: float) -> float:
    spent = 0.0
    for _, seconds, acc, status in charged:
        spent += seconds
        if status == "ok" and acc >= best - EPS - 1e-9:
            return spent
    return math.inf


def run(meta_name: str, caps, *, every: int, floor: float, spec: str, requeue: bool = False) -> dict:
    meta_all = load_meta(meta_name)
    train = meta_all.exclude(datasets=list(heldout(meta_name)))
    scoring, model, kind, _ = time_model_arrays(train, time_model="live")
    strategy = parse_strategy(spec).with_time_model(time_overhead=model.overhead, time_scale=model.scale,
                                                    time_kind=kind)
    arrays = meta_arrays(train, time_kind=strategy.time_kind)
    prep = _Prepared.of(train, arrays, _attempted(train, list(arrays.datasets), list(arrays.learners)))
    infos = prep.infos()
    rows = np.flatnonzero(scoring.available.any(axis=1))[::every]
    out = {c: [] for c in caps}
    fired = {c: 0 for c in caps}
    bound = []
    with one_blas_thread():
        for d in rows:
            keep = np.arange(len(arrays.datasets))
            strategy._fit_prepared(prep.take(keep[keep != d]))
            dataset = scoring.datasets[d]
            env = SimulatedEnvironment(scoring, dataset)
            ok = [env.seconds(l) for l in env.available
                  if l not in env.censored and env.accuracy(l) >= env.best_accuracy - EPS - 1e-9]
            bound.append(min(ok))
            for c in caps:
                policy = strategy.policy(infos[d])
                capped = CappedEnvironment(env, policy, c, floor, requeue=requeue)
                chooser = Requeue(policy, capped) if requeue else policy
                run_policy(SkipUnavailable(chooser, env.available), capped, dataset=dataset)
                capped.retry_stopped()
                fired[c] += bool(capped.stopped) or capped.fired
                out[c].append(time_to_eps(capped.charged, env.best_accuracy))
            print(f"{len(bound)}/{len(rows)} {dataset}", file=sys.stderr, end="\r", flush=True)
    print(file=sys.stderr)
    return {"rows": len(rows), "bound": np.array(bound), "times": {c: np.array(v) for c, v in out.items()},
            "fired": fired}


def wtl(a: np.ndarray, b: np.ndarray) -> str:
    tie = np.abs(a - b) <= np.maximum(0.05 * np.abs(b), 0.05)
    return f"{int(((a < b) & ~tie).sum())}/{int(tie.sum())}/{int(((a > b) & ~tie).sum())}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--meta", default="lcdb", choices=("broad", "lcdb", "oboe"))
    ap.add_argument("--caps", nargs="+", type=float, default=[math.inf, 20.0, 10.0, 5.0])
    ap.add_argument("--z", nargs="*", type=float, default=[],
                    help="also caps of 10 ** (z x sigma) x predicted, sigma the learner's runtime residual spread "
                         "in log10 seconds (rows 'z=...')")
    ap.add_argument("--floor", type=float, default=1.0, help="no test is stopped before this many seconds")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--strategy", default="eiu:cap=inf", help="an ei-family spec without a cap of its own")
    ap.add_argument("--retry", choices=("end", "requeue"), default="end",
                    help="stopped learners: tested again uncapped at the end, or kept as candidates at the cap's price")
    args = ap.parse_args(argv)
    if math.isfinite(getattr(parse_strategy(args.strategy), "cap", math.inf)):
        raise SystemExit(f"error: {args.strategy} stops tests itself; give it cap=inf (this script applies the caps)")
    caps = sorted(set(args.caps), reverse=True)
    if math.inf not in caps:
        caps = [math.inf] + caps
    caps += [-z for z in args.z if z > 0]  # encoded as negative caps
    res = run(args.meta, caps, every=args.every, floor=args.floor, spec=args.strategy, requeue=args.retry == "requeue")
    bound = res["bound"].sum()
    base = res["times"][math.inf]
    print(f"{args.meta} training part, {res['rows']} datasets, {args.strategy}, floor {args.floor:g} s, retry {args.retry}; "
          f"oracle bound {bound / 3600:.3f} h")
    print("| cap (x predicted) | sum | x oracle bound | median | not reached | datasets with a stopped test | "
          "W/T/L vs no cap |")
    print("|---|---|---|---|---|---|---|")
    for c in caps:
        t = res["times"][c]
        fin = np.isfinite(t)
        label = "none" if math.isinf(c) else (f"z={-c:g}" if c < 0 else f"{c:g}")
        print(f"| {label} | {t[fin].sum() / 3600:.3f} h | "
              f"{t[fin].sum() / bound:.2f} | {np.median(t):.3g} s | {int((~fin).sum())} | {res['fired'][c]} | "
              f"{'' if math.isinf(c) else wtl(np.where(fin, t, 1e18), np.where(np.isfinite(base), base, 1e18))} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
