"""Exceptions of algorank.

Every layer raises these so that the command line can tell a user mistake
(:class:`InputError`, exit code 2) from another failure (:class:`AlgorankError`,
exit code 1) without catching anything it does not own.
"""

from __future__ import annotations

__all__ = ["AlgorankError", "InputError", "ValidationError"]


class AlgorankError(Exception):
    """Base class of every error algorank raises on purpose."""


class InputError(AlgorankError, ValueError):
    """Bad input from the user: a wrong parameter, a missing or unreadable file.

    Parameters
    ----------
    *args
        The message (as for any exception).
    parameters : sequence of str, optional
        The Python parameters the message names, written ``name=`` in it (``repeats='auto' needs
        stop='rank' or stop='ks'``).  A front end that names them otherwise (the command line,
        with its flags) rewrites exactly these; the text stays valid Python wording for everyone else.
    """

    def __init__(self, *args, parameters=()) -> None:
        super().__init__(*args)
        self.parameters = tuple(parameters)


class ValidationError(InputError):
    """Meta-data that breaks the MetaDataset contract (names the bad column, rows or values)."""
