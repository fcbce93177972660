"""Base level: datasets, per-fold preprocessing, resampling, stopping rules, the repeated-CV evaluator and its fold store."""

__all__: list[str] = []
