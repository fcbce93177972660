"""Meta level: traces, simulated environments, time models, loss-time curves, MIL and leave-one-dataset-out benchmarks."""

__all__: list[str] = []
