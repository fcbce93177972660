"""algorank.metadata.openml_cache: checksummed, atomic page files."""

from __future__ import annotations

import json
import math

from hypothesis import given, settings, strategies as st

from algorank.metadata.openml_cache import PageCache, request_key

_json = st.recursive(
    st.none() | st.booleans() | st.integers(-10**9, 10**9) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.dictionaries(st.text(max_size=5), _json, max_size=4), max_size=5), last=st.booleans())
def test_round_trip(tmp_path_factory, rows, last):
    cache = PageCache(tmp_path_factory.mktemp("c"))
    key = request_key({"call": "x", "offset": 0})
    cache.put(key, rows, last=last)
    page = cache.get(key)
    assert page is not None and page.last == last and page.rows == json.loads(json.dumps(rows))
    assert cache.corrupt == []


def test_nan_becomes_null_and_key_is_order_free(tmp_path):
    cache = PageCache(tmp_path)
    assert request_key({"a": 1, "b": [2, 3]}) == request_key({"b": [2, 3], "a": 1})
    key = request_key({"a": 1})
    cache.put(key, [{"v": math.nan}], last=True)
    assert cache.get(key).rows == [{"v": None}]


def test_tampered_or_foreign_pages_are_corrupt_and_deleted(tmp_path):
    cache = PageCache(tmp_path)
    k1, k2 = request_key({"p": 1}), request_key({"p": 2})
    path = cache.put(k1, [{"v": 0.5}], last=False)
    payload = json.loads(path.read_text())
    payload["rows"][0]["v"] = 0.25  # valid JSON, wrong checksum
    path.write_text(json.dumps(payload))
    assert cache.get(k1) is None and not path.exists() and cache.corrupt == [k1]
    p1 = cache.put(k1, [], last=True)
    cache.path_for(k2).parent.mkdir(parents=True, exist_ok=True)
    cache.path_for(k2).write_text(p1.read_text())  # a page stored under another request's name
    assert cache.get(k2) is None and cache.corrupt == [k1, k2]
    assert cache.get(request_key({"p": 3})) is None and cache.corrupt == [k1, k2]  # absent is not corrupt
