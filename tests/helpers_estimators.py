"""Deliberately misbehaving estimators for the evaluator tests (importable by subprocesses).

``FailingClassifier`` raises in ``fit``; ``ExitingClassifier`` ends its process in ``fit``; ``SlowClassifier`` sleeps ``delay`` seconds in
``fit`` then predicts the majority class, so it can outlast a timeout or let a test
kill a run after a few folds are stored; ``SlowOnLargeClassifier`` sleeps only when fitted
on at least ``min_rows`` rows (so a small warm-up fit is fast and a real fold is not).
"""

from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

__all__ = ["FailingClassifier", "SlowClassifier", "SlowOnLargeClassifier", "ThreadCountClassifier", "ExitingClassifier",
           "new_log", "log_file", "slow_meta"]


def log_file(tag: str) -> Path:
    """The file a ``log`` tag names.  A learner id is data and may not carry a path (algorank refuses
    one), so the estimators take a plain word and write to a fixed place in the temporary folder."""
    return Path(tempfile.gettempdir()) / f"algorank-test-{tag}.log"


def new_log() -> tuple[str, Path]:
    """A fresh ``log`` tag and its (not yet existing) file."""
    tag = uuid.uuid4().hex
    return tag, log_file(tag)


class FailingClassifier(ClassifierMixin, BaseEstimator):
    """Raises ``RuntimeError`` in ``fit``."""

    def __init__(self, message: str = "deliberate failure"):
        self.message = message

    def fit(self, X, y):
        raise RuntimeError(self.message)

    def predict(self, X):  # pragma: no cover - never fitted
        raise RuntimeError(self.message)


class ExitingClassifier(ClassifierMixin, BaseEstimator):
    """Ends its process with ``os._exit(code)`` in ``fit`` (a crash in native code, the OOM killer)."""

    def __init__(self, code: int = 3):
        self.code = code

    def fit(self, X, y):
        import os

        os._exit(self.code)

    def predict(self, X):  # pragma: no cover - never fitted
        raise RuntimeError("never fitted")


class SlowClassifier(ClassifierMixin, BaseEstimator):
    """Sleeps ``delay`` seconds in ``fit``; predicts the training majority class.

    With ``log`` (a tag, see :func:`log_file`), each ``fit`` first appends a line ``<pid>`` to its
    file, so a test can count how often, and by which process, folds were computed.  With
    ``gate`` (a tag too), ``fit`` then waits until that file exists (at most ``wait`` seconds)
    before it sleeps, so a test can hold fits until it has seen what it needs.
    """

    def __init__(self, delay: float = 1.0, log: str | None = None, gate: str = "", wait: float = 120.0):
        self.delay = delay
        self.log = log
        self.gate = gate
        self.wait = wait

    def fit(self, X, y):
        if self.log:
            import os

            with open(log_file(self.log), "a") as f:
                f.write(f"{os.getpid()}\n")
        if self.gate:
            end = time.monotonic() + self.wait
            while not log_file(self.gate).exists() and time.monotonic() < end:
                time.sleep(0.02)
        time.sleep(self.delay)
        self.classes_, counts = np.unique(y, return_counts=True)
        self.majority_ = self.classes_[np.argmax(counts)]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


class SlowOnLargeClassifier(SlowClassifier):
    """:class:`SlowClassifier` that sleeps only when fitted on at least ``min_rows`` rows."""

    def __init__(self, delay: float = 1.0, min_rows: int = 100):
        super().__init__(delay=delay)
        self.min_rows = min_rows

    def fit(self, X, y):
        if len(X) < self.min_rows:
            self.classes_, counts = np.unique(y, return_counts=True)
            self.majority_ = self.classes_[np.argmax(counts)]
            return self
        return super().fit(X, y)
class ThreadCountClassifier(ClassifierMixin, BaseEstimator):
    """Appends the largest BLAS/OpenMP thread count in effect during ``fit`` to the file of tag ``log``."""

    def __init__(self, log: str = ""):
        self.log = log

    def fit(self, X, y):
        from threadpoolctl import threadpool_info

        with open(log_file(self.log), "a") as f:
            f.write(f"{max((i['num_threads'] for i in threadpool_info()), default=1)}\n")
        self.classes_, counts = np.unique(y, return_counts=True)
        self.majority_ = self.classes_[np.argmax(counts)]
        return self

    def predict(self, X):
        return np.full(len(X), self.majority_)


class InterruptSwallowingClassifier(ClassifierMixin, BaseEstimator):
    """Catches ``KeyboardInterrupt`` in ``fit`` and returns a half-trained model, as scikit-learn's MLP does.

    Until the file ``gate`` exists, ``fit`` waits for it (up to ``wait`` seconds); an interrupt
    that arrives meanwhile is swallowed and the model returned predicts the *minority* class
    (a wrong, "half-trained" result).  With ``self_interrupt`` it sends SIGINT to its own process
    instead of waiting, so a test can land an interrupt inside a fit deterministically.  Once the
    gate exists it fits normally and predicts the training majority class.  With ``log`` each
    ``fit`` first appends ``<pid>`` to that file.  ``gate`` and ``log`` are tags naming files
    (:func:`log_file`): a learner id may not carry a path.
    """

    def __init__(self, gate: str = "", wait: float = 60.0, self_interrupt: bool = False, log: str | None = None):
        self.gate = gate
        self.wait = wait
        self.self_interrupt = self_interrupt
        self.log = log

    def fit(self, X, y):
        import os
        import signal

        gate = log_file(self.gate) if self.gate else None
        if self.log:
            with open(log_file(self.log), "a") as f:
                f.write(f"{os.getpid()}\n")
        self.classes_, counts = np.unique(y, return_counts=True)
        self.label_ = self.classes_[np.argmax(counts)]
        if gate is not None and gate.exists():
            return self
        try:
            if self.self_interrupt:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(1.0)  # the handler runs at the next bytecode; never reached in practice
            end = time.monotonic() + self.wait
            while time.monotonic() < end and not (gate is not None and gate.exists()):
                time.sleep(0.02)
        except KeyboardInterrupt:  # swallowed: stop early and return what there is
            self.label_ = self.classes_[np.argmin(counts)]
        return self

    def predict(self, X):
        return np.full(len(X), self.label_)


def slow_meta(folder: Path, learner: str) -> Path:
    """A three-dataset meta-data file (``folder/slow.csv`` and its datasets file) where ``learner`` is
    expected to take 3 x 10 s: too long for a first test run in-process, so it runs timed, in a fold process."""
    import pandas as pd

    runs = pd.DataFrame([{"dataset": f"d{d}", "learner": learner, "repeat": 0, "fold": 0, "accuracy": 0.9,
                          "fit_time": 10.0} for d in range(3)])
    datasets = pd.DataFrame({"dataset": ["d0", "d1", "d2"], "n_instances": [100, 200, 300], "n_features": 4,
                             "n_classes": 3, "majority_fraction": 0.4})
    runs.to_csv(folder / "slow.csv", index=False)
    datasets.to_csv(folder / "slow.datasets.csv", index=False)
    return folder / "slow.csv"
