"""The one progress-bar helper (metadata.progress.progress_bar): tqdm on stderr, off when quiet or
when stderr is not a terminal, and used by every bar in the package."""

from __future__ import annotations

import io
import sys
from pathlib import Path

from algorank.metadata.progress import progress_bar

ROOT = Path(__file__).resolve().parents[1]


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_off_when_quiet_or_not_a_terminal(monkeypatch):
    for stream, enabled in ((io.StringIO(), True), (_Tty(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        bar = progress_bar(range(3), desc="x", enabled=enabled)
        assert bar.disable and list(bar) == [0, 1, 2]
        bar.update(1)
        bar.close()
        assert stream.getvalue() == ""


def test_on_for_a_terminal(monkeypatch):
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    bar = progress_bar(total=0, desc="evaluate", unit="fold")
    assert not bar.disable
    bar.total += 2
    bar.update(2)
    bar.close()
    assert "evaluate" in tty.getvalue()


def test_no_other_tqdm_in_the_package():
    users = sorted(str(p.relative_to(ROOT)) for pkg in ("metadata", "evaluation", "recommender")
                   for p in (ROOT / pkg).rglob("*.py")
                   if "from tqdm" in p.read_text(encoding="utf-8") or "import tqdm" in p.read_text(encoding="utf-8"))
    assert users == ["metadata/progress.py"]
