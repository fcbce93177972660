"""The benchmark harness, above the strategies: leave-one-dataset-out scoring, P tuning, strategy comparison statistics, user-facing metrics and plots.

What the strategies themselves need (traces, simulated environments, time models, the loss-time
measure, the oracle order) is the strategy kernel, :mod:`algorank.recommender.kernel`.
"""

__all__: list[str] = []
