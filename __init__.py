"""algorank: which learners should I try first on this dataset, and in what order?

The public API (the CLI is a thin shell over exactly these)::

    import algorank
    rec = algorank.recommend(df, target="class", budget=30)   # test learners live, refit the best
    rec.leaderboard                                          # what ran, CV accuracy, seconds
    rec.model.predict(new_rows)                              # the refitted best learner

    meta = algorank.load_meta("uci")                         # or "lcdb", a file, a MetaDataset
    algorank.benchmark(["ar:p=0", "ar:p=1/16"], meta)        # leave-one-dataset-out loss-time
    algorank.tune_p(meta, nested=True)                       # which A3R P
    algorank.multitest(meta)                                 # Multi2Test order with statistics
    algorank.evaluate(X, y=y, learners=["knn", "logreg"])    # repeated CV of chosen learners
    algorank.AlgorankClassifier(budget=30).fit(X, y)         # the loop as a scikit-learn estimator
"""

import sys as _sys

_argv0 = (getattr(_sys, "argv", None) or [""])[0]
if _argv0 == "-m" or _argv0.rsplit("/", 1)[-1] == "algorank":  # the command line is starting
    import os as _os
    import signal as _signal

    def _interrupted_while_starting(signum, frame):  # a Ctrl-C during the imports: exit 130, no traceback
        _os.write(2, b"interrupted\n")
        _os._exit(130)

    _signal.signal(_signal.SIGINT, _interrupted_while_starting)  # cli.main() puts Python's handler back

from algorank.api import benchmark, evaluate, load_meta, multitest, pull, recommend, tune_p
from algorank.metadata.dataset import MetaDataset

__version__ = "0.1.0"

__all__ = ["load_meta", "recommend", "evaluate", "benchmark", "tune_p", "multitest", "pull", "MetaDataset",
           "AlgorankClassifier", "__version__"]


def __getattr__(name: str):
    # the estimator imports scikit-learn (over a second): only when asked for, not for every command
    if name == "AlgorankClassifier":
        from algorank.recommender.live.estimator import AlgorankClassifier

        return AlgorankClassifier
    raise AttributeError(f"module 'algorank' has no attribute {name!r}")
