"""Published methods for the same job as algorank's strategies, as strategies (peers).

Each module follows one published method and names the paper and the file of the authors' code it
follows; the hyperparameters are the authors'; every deviation is listed with its reason in the
module docstring.

* :mod:`.oboe`: OBOE (Yang et al., KDD 2019) and TensorOboe's design (spec ``oboe``, ``oboe:design=greedy``);
* :mod:`.portfolio`: auto-sklearn 2.0's greedy portfolio (Feurer et al., JMLR 2022) and TabRepo's rank-based
  zero-shot portfolio (Salinas and Erickson, 2024) (specs ``portfolio``, ``portfolio:rank``);
* :mod:`.pmf`: probabilistic matrix factorisation with expected improvement (Fusi, Sheth and Elibol,
  NeurIPS 2018) (specs ``pmf``, ``pmf:per_second``);
* :mod:`.zeroshot`: FLAML's zero-shot nearest-task portfolio (Kayali and Wang, 2022) (spec ``zeroshot``).

The kernel types these modules need (meta-data arrays, observations, time model) are imported in
:mod:`._common` only.
"""

__all__: list[str] = []
