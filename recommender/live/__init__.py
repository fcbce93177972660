"""The live recommend loop: the live environment, ``recommend`` and its plot."""

__all__: list[str] = []
