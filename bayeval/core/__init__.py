"""The core every part of bayeval stands on: input checks, defaults, progress bars,
diagnostics, the data container (:mod:`.data`), the metric kernels (:mod:`.metrics`),
sampling (:mod:`.sampling`), the model contract (:mod:`.model`) and the posterior
family (:mod:`.posterior`, with metric evaluation in :mod:`.evaluate` and summary
tables in :mod:`.summary`).

Nothing in ``bayeval.core`` imports a module of bayeval outside it; see
``docs/architecture.md``. Import from the modules (``from bayeval.core.data import
EvalData``), or from the package face (``from bayeval import EvalData``).
"""
