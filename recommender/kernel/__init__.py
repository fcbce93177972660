"""The strategy kernel: what every strategy and the harness above them share.

It sits below the strategies (:mod:`algorank.recommender`) and imports nothing from them or from
the benchmark harness (:mod:`algorank.evaluation.meta`):

* :mod:`~algorank.recommender.kernel.trace`: ``Observation``, ``Trace``, ``run_policy``;
* :mod:`~algorank.recommender.kernel.environments`: ``MetaArrays`` and simulated environments;
* :mod:`~algorank.recommender.kernel.time_model`: ``TimeModel`` (recorded or live test times);
* :mod:`~algorank.recommender.kernel.loss_time`: the loss-time measure and its window;
* :mod:`~algorank.recommender.kernel.oracle`: the oracle order of one dataset;
* :mod:`~algorank.recommender.kernel.labels`: ``format_p``, the one formatter of P, and ``log_time_axis``.
"""

__all__: list[str] = []
