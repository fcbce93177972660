"""Every public name (``algorank.__all__``) has a numpydoc docstring with its parameters or attributes, what it
returns, and an example; the examples that are cheap to run (the others say ``doctest: +SKIP``) give the output
they show."""

from __future__ import annotations

import doctest
import inspect
import logging

import pytest
from numpydoc.docscrape import ClassDoc, FunctionDoc

import algorank

PUBLIC = [n for n in algorank.__all__ if n != "__version__"]


def _doc(name: str):
    obj = getattr(algorank, name)
    return obj, (ClassDoc(obj) if inspect.isclass(obj) else FunctionDoc(obj))


@pytest.mark.parametrize("name", PUBLIC)
def test_public_name_has_a_numpydoc_docstring_with_an_example(name):
    obj, doc = _doc(name)
    assert doc["Summary"], name
    if inspect.isclass(obj):
        assert doc["Parameters"] or doc["Attributes"], f"{name}: no Parameters or Attributes section"
    else:
        assert doc["Parameters"] or not inspect.signature(obj).parameters, f"{name}: no Parameters section"
        assert doc["Returns"], f"{name}: no Returns section"
    assert any(line.lstrip().startswith(">>>") for line in doc["Examples"]), f"{name}: no Examples section"


@pytest.mark.parametrize("name", PUBLIC)
def test_public_examples_run(name):
    obj, _ = _doc(name)
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(obj, name, globs={}) if t.examples]
    assert tests, f"{name}: no doctest examples"
    logging.disable(logging.WARNING)
    try:
        for t in tests:
            runner.run(t)
    finally:
        logging.disable(logging.NOTSET)
    assert runner.failures == 0, f"{name}: {runner.failures} example(s) gave other output (run with -s to see them)"
