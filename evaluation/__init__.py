"""Evaluation: base level (resampling, the repeated-CV evaluator, statistical tests)
and meta level (loss-time curves, MIL, leave-one-dataset-out benchmarks, plots)."""

__all__: list[str] = []
