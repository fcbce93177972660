"""``algorank info``: summarise a meta-dataset (default: the embedded modern set)."""

from algorank.commands.options import add_common

__all__ = ["HELP", "add_arguments", "run"]

HELP = "summarise a meta-dataset (default: the embedded modern set)"


def add_arguments(p) -> None:
    add_common(p)


def run(args):
    from algorank.api import info

    return info(args.meta)
