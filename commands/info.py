"""``algorank info``: summarise a meta-dataset (default: the embedded broad set)."""

from __future__ import annotations

from algorank.commands.options import add_common

__all__ = ["NAME", "HELP", "WRITES", "add_arguments", "run"]

NAME = "info"
HELP = "summarise a meta-dataset (default: the embedded broad set)"
WRITES = False


def add_arguments(p) -> None:
    add_common(p)


def run(args):
    from algorank.api import info

    return info(args.meta)
