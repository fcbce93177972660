"""The runtime model's classes x features term for learners that boost per class."""

import math

import numpy as np
import pytest

from algorank.metadata.errors import InputError
from algorank.metadata.learners import boosts_per_class
from algorank.recommender.runtime_model import fit_runtime_model


@pytest.mark.parametrize("learner, expected", [
    ("sklearn.ensemble.GradientBoostingClassifier", True),
    ('sklearn.ensemble.GradientBoostingClassifier{"learning_rate": 0.1, "max_depth": 3}', True),  # OBOE's form
    ("sklearn.ensemble.HistGradientBoostingClassifier", True),
    ("histgb:default", True),
    ("lgbm:default", True),
    ("xgb:ag2023-r33", True),
    ("xgb-depth:flaml-binary-1", True),
    ("catboost:default", True),
    ("rf:default", False),
    ("extra-trees:autosklearn-1", False),
    ("sklearn.ensemble.RandomForestClassifier", False),
    ("sklearn.ensemble.GradientBoostingRegressor", False),
    ("lgbm-reg:default", False),
    ("SVC_rbf", False),
    ("mymodule.GradientBoostingClassifierLike", False),
])
def test_which_learners_boost_per_class(learner, expected):
    assert boosts_per_class(learner) is expected


def _table(rng, n_datasets=60):
    """Sizes (log10 rows, features, classes) and exact times: both learners take 1 ms per row; ``boost``
    also pays ``(log10 k - 0.5)(log10 d - 1)`` log10 units, as if it grew trees per class over every feature."""
    x = np.column_stack([rng.uniform(2, 4.5, n_datasets), rng.uniform(0.5, 3, n_datasets),
                         np.log10(rng.integers(2, 60, n_datasets))])
    plain = -3.0 + x[:, 0]
    boost = plain + (x[:, 2] - 0.5) * (x[:, 1] - 1.0)
    return x, 10.0 ** np.column_stack([plain, boost])


def test_the_term_recovers_a_per_class_cost():
    """Without the ridge's pull (``lam`` near 0), the flagged learner's term is recovered exactly, and its time on
    a new dataset of 50 classes and 1,000 features with it; a single class slope misses that time by far.  With
    the default pull, the term lies between the exact 1 and the slope shared by both learners (1/2)."""
    x, seconds = _table(np.random.default_rng(0))
    query = np.array([[3.0, 3.0, math.log10(50)]])
    truth = -3.0 + 3.0 + (math.log10(50) - 0.5) * 2.0  # log10 seconds: 2.40 -> 251 s
    flagged = fit_runtime_model(seconds, x, ["plain", "boost"], per_class=[False, True], lam=1e-9)
    assert flagged.coef.shape == (2, 7)
    assert flagged.coef[0, 6] == 0.0  # the other learner has no such term
    assert flagged.coef[1] == pytest.approx([-3.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0], abs=1e-6)
    assert flagged.predict_log10(query)[0] == pytest.approx([0.0, truth], abs=1e-6)  # 1,000 rows at 1 ms
    assert flagged.sigma[1] == 0.05  # the floor: the design explains every time
    unflagged = fit_runtime_model(seconds, x, ["plain", "boost"], lam=1e-9)
    assert abs(unflagged.predict_log10(query)[0, 1] - truth) > 0.3
    assert unflagged.sigma[1] > 0.1
    pulled = fit_runtime_model(seconds, x, ["plain", "boost"], per_class=[False, True])
    assert 0.5 < pulled.coef[1, 6] < 1.0


def test_without_flags_the_model_is_the_six_term_one():
    """No flagged learner: the seventh coefficient is zero, and the first six and the predictions equal a model
    fitted on the six terms (the same solve with the last column dropped)."""
    x, seconds = _table(np.random.default_rng(1))
    none = fit_runtime_model(seconds, x, ["plain", "boost"], per_class=[False, False])
    default = fit_runtime_model(seconds, x, ["plain", "boost"])
    assert np.array_equal(none.coef, default.coef)
    assert np.all(none.coef[:, 6] == 0.0)
    queries = np.array([[2.5, 1.0, 0.3], [4.0, 2.5, 1.5]])
    assert np.array_equal(none.predict_log10(queries), default.predict_log10(queries))
    flagged = fit_runtime_model(seconds, x, ["plain", "boost"], per_class=[False, True])
    assert np.array_equal(flagged.coef[0], default.coef[0])  # the unflagged learner keeps its fit exactly
    assert flagged.sigma[0] == default.sigma[0]


def test_per_class_must_name_every_learner():
    x, seconds = _table(np.random.default_rng(2), n_datasets=10)
    with pytest.raises(InputError, match="per_class has 1 values for 2 learners"):
        fit_runtime_model(seconds, x, ["plain", "boost"], per_class=[True])
