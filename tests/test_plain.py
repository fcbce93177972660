"""One converter from results to plain Python / strict JSON (metadata.io.to_plain)."""

from __future__ import annotations

import json
import math

import numpy as np

from algorank.metadata.io import json_dumps, to_plain


def test_to_plain_keeps_nan_and_json_makes_it_null():
    value = {"a": np.float64("nan"), 2: (np.int64(3), np.bool_(True)), "arr": np.array([[1.5, np.inf]])}
    plain = to_plain(value)
    assert math.isnan(plain["a"]) and type(plain["a"]) is float
    assert plain[2] == [3, True] and type(plain[2][0]) is int and type(plain[2][1]) is bool
    assert plain["arr"] == [[1.5, math.inf]]
    strict = to_plain(value, json=True)
    assert strict == {"a": None, "2": [3, True], "arr": [[1.5, None]]}
    assert json.loads(json_dumps(value)) == strict


def test_stats_results_use_it():
    from algorank.evaluation.stats import paired_t

    d = paired_t([0.1, 0.2, 0.3], [0.1, 0.2, 0.3]).to_dict()
    assert d["pvalue"] == 1.0 and all(not isinstance(v, np.generic) for v in d.values())
