"""Strategies that order learners and ``recommend`` for a new dataset."""

__all__: list[str] = []
