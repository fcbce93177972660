"""algorank: which learners should I try first on this dataset, and in what order?

The public API (the command line is a thin shell over exactly these)::

    import algorank
    rec = algorank.recommend(df, target="class", budget=30)   # test learners live, refit the best
    rec.leaderboard                                          # what ran, CV accuracy, seconds
    rec.model.predict(new_rows)                              # the refitted best learner (or ensemble)
    print(rec.to_text())                                     # what `algorank recommend` prints

    meta = algorank.load_meta("broad")                       # the default; or "uci", "lcdb", "oboe", a file
    algorank.info(meta)                                      # counts
    algorank.rank(meta, p="1/16")                            # AR-A3R average ranking
    algorank.benchmark(["ar:p=0", "ar:p=1/16"], meta)        # leave-one-dataset-out loss-time
    algorank.tune_p(meta, nested=True)                       # which A3R P
    algorank.multitest(meta)                                 # Multi2Test order with statistics
    algorank.compare(meta, learners=["knn", "lda", "svc-rbf"])  # Friedman, post hoc, effect sizes
    algorank.evaluate(X, y=y, learners=["knn", "logreg"])    # repeated CV of chosen learners
    algorank.AlgorankClassifier(budget=30).fit(X, y)         # the loop as a scikit-learn estimator
    algorank.AlgorankRegressor(budget=30).fit(X, y)          # the same for a numeric target

Importing the package is cheap: each name is imported on first use.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: Public name -> module that defines it (imported on first access).
_LAZY = {
    **{name: "algorank.api" for name in (
        "load_meta", "info", "rank", "recommend", "evaluate", "benchmark", "tune_p", "multitest", "compare",
        "export", "pull", "build_meta")},
    **{name: "algorank.results" for name in (
        "TuneResult", "RankResult", "ExportResult", "DatasetSelection", "RecordResult")},
    "MetaDataset": "algorank.metadata.dataset",
    "MetaDescription": "algorank.metadata.dataset",
    "Recommendation": "algorank.recommender.live.recommend",
    "EvaluationResult": "algorank.evaluation.cv.evaluator",
    "BenchmarkSuite": "algorank.evaluation.meta.benchmark",
    "Multi2TestResult": "algorank.recommender.multitest",
    "LearnerComparison": "algorank.evaluation.stats.compare",
    "AlgorankClassifier": "algorank.recommender.live.estimator",
    "AlgorankRegressor": "algorank.recommender.live.regressor",
    "EnsembleClassifier": "algorank.recommender.live.ensemble",
    "EnsembleRegressor": "algorank.recommender.live.ensemble",
}

__all__ = [*_LAZY, "__version__"]


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'algorank' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later accesses are plain attribute lookups
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
