"""Posteriors of an annotator-error fit: the true classes, their metrics, and what the fit reports.

:meth:`AnnotatorError.fit <bayeval.annotators.model.AnnotatorError.fit>` returns an
:class:`AnnotatorPosterior` (two classes: the label draws of :class:`bayeval.Posterior`)
or a :class:`CategoricalPosterior` (``K > 2``: class indices through the same engine; a
subclass of the first). Both report the fit (the model draws, the posterior reports):
``summary()`` (the classifier's true and population accuracy, the annotators' accuracies
and error correlations, the gold items' readings), ``check()`` (sampler diagnostics),
``guarded_accuracy()``, ``rectified_accuracy()`` and ``prior_sensitivity()``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import arviz as az
import numpy as np
import pandas as pd
import xarray as xr

from ..core import _diagnostics as _diag
from ..core import _validate as V
from ..core._defaults import HDI_PROB
from ..core.data import EvalData
from ..core.posterior import Posterior
from ..core.summary import hdi, summary_frame, summary_rows
from ._identified import (
    ERROR_LIFT,
    ZERO_WIDTH,
    IdentifiedAccuracy,
    accuracy_range,
    gold_to_width,
    identified_sentence,
    joint_floors,
    unguarded_gold_sentence,
    unguarded_sentence,
)
from ._sensitivity import power_scaling
from ._checks import MAX_CLASSES, check_classes, to_float_matrix
from ._likelihood import PARAM_NAMES, rhat_advice
from .gold import (
    GuardedAccuracy,
    RectifiedAccuracy,
    beta_hdi,
    gold_only_accuracy_interval,
    guarded_reading,
    rectified_reading,
)

__all__ = ["AnnotatorPosterior", "CategoricalPosterior", "IdentifiedAccuracy"]

_CLASS_METRICS = ("accuracy", "class_accuracy", "precision", "recall", "f_score")
_INTERVAL_KINDS = ("hdi", "equal-tailed")


class AnnotatorPosterior(Posterior):
    """Posterior of a two-class annotator-error fit: the true classes and what the fit reports.

    A :class:`bayeval.Posterior` whose EvalData has ``labels=gold``,
    ``predictions=predictions`` (and ``noisy_labels`` when there is a single, complete
    annotator column) and whose label draws are the true classes, so
    ``post.metric("accuracy")`` is the posterior of the classifier's true accuracy on
    these items and ``post.population("accuracy")`` its population accuracy. Besides,
    the fit's reports: :meth:`summary` (called without metrics), :meth:`check`,
    :meth:`guarded_accuracy`, :meth:`rectified_accuracy` and :meth:`prior_sensitivity`
    (:class:`CategoricalPosterior` has them too). The parameters are those of
    :class:`bayeval.Posterior`; ``gold_check`` (a dict; None without gold items) and
    ``model_spec`` (the :class:`~bayeval.annotators.model.AnnotatorError`, whose priors the
    sensitivity reports read) are set by the fit.

    Examples
    --------
    >>> import arviz as az
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.annotators import AnnotatorPosterior
    >>> idata = az.from_dict(posterior={"x": np.zeros((1, 100))})
    >>> post = AnnotatorPosterior(EvalData([1.0, 0.0, 1.0], [1, np.nan, np.nan], predictions=[1, 0, 1]),
    ...                           idata, lambda params: [1.0, 0.2, 0.9], random_seed=0)
    >>> round(float(post.metric("accuracy").mean()), 1)
    0.9
    """

    #: the gold items' stacking weight and check (None without gold items)
    gold_check = None
    #: none of EvalData's caveats apply (:func:`bayeval.core.data.data_caveats`): they speak of vetted labels
    #: read through a calibration curve and of the scores' shape (here the 0/1 predictions stand in for the
    #: scores); what the gold items and annotations leave open is this posterior's own caveat
    data_caveat_kinds = ()

    def check(self, *, warn: bool = True) -> dict:
        """Convergence diagnostics of a fit, with a warning when they are bad.

        Bad means: any r_hat > 1.01 (with more than one chain), any bulk ESS below
        100 per chain, or any divergent transition, over the model's parameters
        (accuracies, difficulty correlations, prevalences). ``AnnotatorError.fit`` runs this
        check itself (``warn=True``) and keeps the result as ``post.convergence``.

        Parameters
        ----------
        warn : bool, default True

        Returns
        -------
        dict
            ``max_rhat``, ``min_ess_bulk``, ``divergences``, ``ok`` and ``messages``.

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval import EvalData
        >>> from bayeval.annotators import AnnotatorPosterior
        >>> rng = np.random.default_rng(0)
        >>> idata = az.from_dict(posterior={"model_class_accuracy": rng.uniform(0.8, 0.9, (2, 500, 2))},
        ...                      sample_stats={"diverging": np.zeros((2, 500), dtype=bool)})
        >>> post = AnnotatorPosterior(EvalData([0.0, 1.0], predictions=[0, 1]), idata, lambda p: [0.1, 0.9])
        >>> post.check()["ok"]
        True
        """
        return _diag.check_convergence(self.idata, self.sampling, PARAM_NAMES, warn=warn, advice=rhat_advice(self))


    def rectified_accuracy(self, *, prob: float = HDI_PROB) -> RectifiedAccuracy:
        """The classifier's true accuracy on these items, read the prediction-powered way.

        The structured model predicts, for every item, the probability ``q`` that the
        classifier is right (from the item's annotations and prediction; for a gold item
        leave-one-out, i.e. without its gold label). The gold items measure how wrong
        that prediction is: the estimate is ``mean(q over all items) + mean(c - q over
        the gold items)`` with ``c`` = 1 where the classifier is right. Because the gold
        items are a random sample, the correction removes the model's bias whatever the
        model gets wrong (about shared errors, the priors, ...); the interval is a
        Student t interval with the finite-population factor ``1 - n_gold / n_items``.
        It is as wide as the gold items alone allow when ``q`` predicts nothing, and
        narrower when ``q`` predicts who is right. The residuals' variance counts half a
        right and half a wrong gold item beside the real ones, so that gold items
        without an error (or a model that predicts them all exactly) do not give a
        zero-width interval.

        This is a frequentist interval from the same fit (no new sampling); compare it
        with the posterior's interval (``summary``'s ``true_accuracy`` row, which shows
        this reading as ``true_accuracy_rectified``). It needs at least two gold items,
        drawn at random (or at least blind to difficulty) from the items.

        Parameters
        ----------
        prob : float, default 0.9
            Coverage probability of the interval.

        Returns
        -------
        RectifiedAccuracy
            ``estimate``, ``lower``, ``upper``, ``std_error``, ``n_gold``, ``prob``.

        Examples
        --------
        >>> from bayeval.annotators import RectifiedAccuracy
        >>> RectifiedAccuracy(0.83, 0.78, 0.88, 0.03, 30, 0.9).upper
        0.88
        """
        prob = V.as_probability(prob, "prob", open_interval=True)
        check = self.gold_check
        if not check:
            raise ValueError(
                "The prediction-powered accuracy needs gold items: fit AnnotationData(..., gold=...) with "
                "the true class of a random sample of items (NaN for the others)."
            )
        if "q_mean_all" not in check:
            raise ValueError(
                "This fit's gold check lacks the prediction-powered pieces (it was made by an earlier "
                "bayeval): fit the data again."
            )
        return rectified_reading(check, prob)


    def guarded_accuracy(self, *, prob: float = HDI_PROB, interval: str = "hdi") -> GuardedAccuracy:
        """The classifier's true accuracy on these items, never claimed more precisely than
        the gold items alone allow.

        The interval is the smallest one that contains both the posterior's interval (the
        fitted model, stacked with the gold-only model) and the gold items' own interval
        (the plain Beta-Binomial reading: the classifier's accuracy ``~ Beta(1 + right,
        1 + wrong)`` from the gold items, the other items' correctness drawn from it,
        computed exactly). It holds probability ``prob`` or more under both readings, so
        it covers the true accuracy whenever the gold items' interval does: however wrong
        the model's picture of the shared errors is, the report is never less honest than
        the gold items alone. The price: it is never narrower than the gold items'
        interval. The estimate is the posterior mean (whose error is below the gold
        items' own when the model fits). This is the interval :meth:`summary` reports in
        its ``true_accuracy`` row when the fit has gold items (``guard=True``, the
        default); the posterior's own interval is its ``true_accuracy_posterior`` row.

        Parameters
        ----------
        prob : float, default 0.9
            Probability of each of the two intervals.
        interval : {"hdi", "equal-tailed"}, default "hdi"
            Highest-density intervals (as :meth:`summary`) or equal-tailed ones.

        Returns
        -------
        GuardedAccuracy
            ``estimate``, ``lower``, ``upper``, the two intervals it joins
            (``posterior_lower/upper``, ``gold_lower/upper``), ``right``, ``n_gold``,
            ``prob`` and ``interval``.

        Examples
        --------
        >>> from bayeval.annotators import GuardedAccuracy
        >>> g = GuardedAccuracy(0.83, 0.78, 0.89, 0.80, 0.86, 0.78, 0.89, 25, 30, 0.9, "hdi")
        >>> (g.lower, g.upper) == (min(g.posterior_lower, g.gold_lower), max(g.posterior_upper, g.gold_upper))
        True
        """
        prob = V.as_probability(prob, "prob", open_interval=True)
        if interval not in _INTERVAL_KINDS:
            raise ValueError(f"`interval` must be one of {_INTERVAL_KINDS}, got {interval!r}.")
        check = self.gold_check
        if not check:
            raise ValueError(
                "The guarded accuracy needs gold items: fit AnnotationData(..., gold=...) with the "
                "true class of a random sample of items (NaN for the others)."
            )
        draws = np.asarray(self.metric("accuracy").values, dtype=np.float64).ravel()
        return guarded_reading(draws, int(check["right"]), int(check["n_gold"]), int(check["n_items"]), prob, interval)


    def summary(self, metrics=None, *, hdi_prob: float = HDI_PROB, sensitivity: bool = True, guard: bool = True,
                error_lift=None, **kwargs) -> pd.DataFrame:
        """The fit's table: the classifier's accuracy, annotator accuracies, error correlations.

        ``summary()`` gives the table below; ``summary(metrics)`` the metric table every
        posterior gives (one row per metric, as :meth:`bayeval.Posterior.summary`).

        Rows: ``model_accuracy`` (population true accuracy of the classifier),
        ``true_accuracy`` (on these items, from the label draws),
        ``annotator_accuracy[annotator=j]``, ``error_correlation[annotator=j]``
        (phi coefficient between "the classifier is wrong" and "annotator j is
        wrong" on a random item, implied by the parameters; 0 = independent
        errors), the difficulty correlations ``rho`` and the class prevalences; with
        gold items also ``true_accuracy_rectified`` (the prediction-powered reading,
        :meth:`rectified_accuracy`: estimate, standard error and interval at
        ``hdi_prob``), ``structured_weight`` and ``gold_check_p`` (the stacking weight
        and the gold check's p-value).

        With gold items (and ``guard=True``) the intervals of ``true_accuracy`` and
        ``model_accuracy`` are *guarded*: widened where needed to contain the gold
        items' own interval (:meth:`guarded_accuracy`; for the population accuracy the
        gold items' ``Beta(1 + right, 1 + wrong)``), so they never claim more than the
        gold items alone support, whatever the model gets wrong. Their mean and sd stay
        the posterior's; the posterior's own intervals are the rows
        ``true_accuracy_posterior`` and ``model_accuracy_posterior``. On three real
        crowdsourcing data sets (280 trials with 30 or 100 gold items, equal-tailed
        intervals) the guarded interval covered the true accuracy in 264 trials, the
        posterior's own in 258 and the gold items' in 253; it was 3--8% wider than the
        gold items' interval, the posterior's 7--30% narrower.

        Without gold items (and ``guard=True``) the data do not say how the classifier's
        errors overlap the annotators' (the fit often flags the true accuracy
        ``"prior-dominated"``, but not always: with seven references on a real crowd the
        posterior's interval was 0.03 wide and missed every time, unflagged), so the
        interval of ``true_accuracy`` is widened to hold the *identified set*
        (:meth:`identified_accuracy`): the range of the accuracy over every overlap of
        the errors, each annotator column right on at least its accuracy's lower bound from
        the fit. The posterior's own interval is then the row ``true_accuracy_posterior``,
        the set alone ``true_accuracy_identified``, and ``attrs["caveats"]`` says what
        would narrow it (an assumption about the overlap, or how many gold items);
        ``attrs["identified"]`` holds the :class:`IdentifiedAccuracy`.
        ``summary(["accuracy"])`` reports the same interval in its ``accuracy`` row (with
        gold items: the guarded one), and says so in its ``attrs["caveats"]``. Its other
        rows (precision, recall, f_score, ...) are the posterior's own intervals, not
        widened (neither to the gold items' interval nor to the identified set): a caveat
        names them, since they rest on the model's picture of the overlap and can miss the
        truth by as much as the accuracy's posterior interval can. EvalData's caveats on vetted labels and the scores' shape
        (worded for a calibration curve) do not apply here and are left out.

        Parameters
        ----------
        metrics : list, optional
            None (the default): the fit's table. Otherwise the metrics to tabulate, as
            :meth:`bayeval.Posterior.summary` takes them (``sensitivity`` and ``guard`` do
            not apply and must be left out; ``**kwargs`` go to every metric).
        hdi_prob : float, default 0.9
        sensitivity : bool, default True
            Add the prior-sensitivity columns of :meth:`prior_sensitivity`
            (``prior_sensitivity``, ``likelihood_sensitivity``, ``diagnosis``) for
            the accuracies and error correlations. A ``"prior-dominated"`` true
            accuracy means the data do not decide where it lies (typically: no gold
            items and one reference per item); :meth:`prior_sensitivity` shows how far
            its interval moves with the priors.
        guard : bool, default True
            With gold items, widen the accuracies' intervals to contain the gold items'
            own; without gold items, widen the true accuracy's interval to the
            identified set (see above). ``False`` reports the posterior's intervals in
            those rows (narrower when the model's picture of the errors is right).
        error_lift : tuple of two floats, optional
            Without gold items: report the identified set under the stated assumption that
            on the items an annotator column gets wrong, the classifier's error rate is
            ``low`` to ``high`` times its overall rate (:meth:`identified_accuracy`); the
            caveat names it. None (the default): no assumption about the overlap; the caveat
            then gives the range under ``(1, 2)``.

        Returns
        -------
        pandas.DataFrame
            Columns ``mean, sd, hdi_<lo>%, hdi_<hi>%`` (and the sensitivity columns;
            NaN where they do not apply, e.g. for a posterior without the model's
            parameters or priors).

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval import EvalData
        >>> from bayeval.annotators import AnnotatorPosterior
        >>> rng = np.random.default_rng(0)
        >>> idata = az.from_dict(posterior={
        ...     "model_accuracy": rng.uniform(0.8, 0.9, (1, 50)),
        ...     "annotator_accuracy": rng.uniform(0.9, 1, (1, 50, 1)),
        ...     "error_correlation": rng.uniform(0, 0.3, (1, 50, 1))})
        >>> post = AnnotatorPosterior(EvalData([0.0, 1.0], predictions=[0, 1]), idata, lambda p: [0.1, 0.9])
        >>> post.summary().index[:2].tolist()
        ['model_accuracy', 'true_accuracy']
        >>> post.summary(["accuracy"]).index.tolist()
        ['accuracy']
        """
        if metrics is not None:
            if sensitivity is not True or guard is not True or error_lift is not None:
                raise TypeError(
                    "`sensitivity`, `guard` and `error_lift` apply to the fit's table, summary() without "
                    "metrics; a metric table takes none of them."
                )
            return self._metric_summary(metrics, hdi_prob=hdi_prob, **kwargs)
        if kwargs:
            raise TypeError(
                f"summary() got unexpected keyword argument(s) {sorted(kwargs)}: metric options apply "
                "with `metrics`, e.g. summary(['accuracy'], ...)."
            )
        hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        if not isinstance(sensitivity, bool | np.bool_):
            raise TypeError(f"`sensitivity` must be True or False, got {sensitivity!r}.")
        if not isinstance(guard, bool | np.bool_):
            raise TypeError(f"`guard` must be True or False, got {guard!r}.")
        error_lift = _as_error_lift(error_lift)
        post = self.idata.posterior
        missing = [v for v in ("model_accuracy", "annotator_accuracy", "error_correlation") if v not in post]
        if missing:
            raise ValueError(
                f"This posterior was not produced by AnnotatorError: it lacks {missing}. For its metrics "
                "pass them, e.g. summary(['accuracy'])."
            )
        rows = []
        sample = ("chain", "draw")
        if "structured_component" in post and self._population is not None:
            population = self.population("accuracy")
        else:
            population = post["model_accuracy"]
        check = self.gold_check
        guarded = bool(guard) and check is not None and check["n_gold"] >= 1
        sens = power_scaling(self.model_spec, self).sensitivity() if sensitivity or guard else None
        ident = None
        if guard and check is None and getattr(self, "_observed", None) is not None and sens is not None:
            # without gold items the true accuracy is reported as the identified range
            diagnosis = str(sens.loc["true_accuracy", "diagnosis"]) if "true_accuracy" in sens.index else ""
            ident = self.identified_accuracy(prob=hdi_prob, diagnosis=diagnosis, error_lift=error_lift)
        elif error_lift is not None:
            raise ValueError(
                "`error_lift` applies to a fit without gold items and with guard=True (it narrows the "
                "identified set); with gold items the reported interval is the guarded one."
            )
        posterior_rows = []
        for name, draws in (("model_accuracy", population), ("true_accuracy", self.metric("accuracy"))):
            row = summary_rows(name, draws, hdi_prob, sample)[0]
            if ident is not None and name == "true_accuracy":
                posterior_rows.append((f"{name}_posterior", *row[1:]))
                posterior_rows.append(("true_accuracy_identified", float("nan"), float("nan"), ident.set_lower,
                                       ident.set_upper))
                row = (name, row[1], row[2], ident.lower, ident.upper)
            if guarded:
                right, n_gold = int(check["right"]), int(check["n_gold"])
                if name == "true_accuracy":
                    g_lo, g_hi = gold_only_accuracy_interval(right, n_gold, int(check["n_items"]), hdi_prob, "hdi")
                else:
                    g_lo, g_hi = beta_hdi(1.0 + right, 1.0 + n_gold - right, hdi_prob)
                posterior_rows.append((f"{name}_posterior", *row[1:]))
                row = (name, row[1], row[2], min(row[3], g_lo), max(row[4], g_hi))
            rows.append(row)
        for name in (
            "annotator_accuracy",
            "error_correlation",
            "model_difficulty_corr",
            "annotator_difficulty_corr",
            "prevalence",
        ):
            if name in post:
                da = post[name]
                da = da.rename({d: "annotator" for d in da.dims if d.endswith("_dim_0")})
                rows += summary_rows(name, da, hdi_prob, sample)
        rows += posterior_rows
        if check is not None:
            nan = float("nan")
            if "q_mean_all" in check and check["n_gold"] >= 2:
                r = rectified_reading(check, hdi_prob)
                rows.append(("true_accuracy_rectified", r.estimate, r.std_error, r.lower, r.upper))
            rows.append(("structured_weight", check["weight"], nan, nan, nan))
            rows.append(("gold_check_p", check["p_value"], nan, nan, nan))
        frame = summary_frame(rows, hdi_prob)
        if sensitivity:
            frame = frame.join(sens[["prior_sensitivity", "likelihood_sensitivity", "diagnosis"]])
            frame["diagnosis"] = frame["diagnosis"].fillna("")
        if ident is not None:
            frame.attrs["identified"] = ident
            frame.attrs["caveats"] = [identified_sentence(ident)]
        return frame

    def _metric_summary(self, metrics, *, hdi_prob: float, **kwargs) -> pd.DataFrame:
        return self._with_reported_accuracy(Posterior.summary(self, metrics, hdi_prob=hdi_prob, **kwargs), hdi_prob)

    def _with_reported_accuracy(self, frame: pd.DataFrame, hdi_prob: float) -> pd.DataFrame:
        """The metric table's ``accuracy`` row with the interval the fit's table reports in its
        ``true_accuracy`` row (guarded with gold items; without them the identified range), and a
        sentence that says which; and a sentence that the other rows are the posterior's own
        intervals, not widened (to the gold items' interval, or to the identified set)."""
        if getattr(self, "_observed", None) is None or not len(frame.index):
            return frame
        reading = self._accuracy_reading(hdi_prob)
        if reading is None:
            return frame
        (lo, hi), sentence, read = reading
        frame = frame.copy()
        caveats = list(frame.attrs.get("caveats", []))
        if "accuracy" in frame.index:
            frame.loc["accuracy", frame.columns[2]] = lo
            frame.loc["accuracy", frame.columns[3]] = hi
            caveats.append(sentence)
        others = [r for r in frame.index if r != "accuracy"]
        if others:
            caveats.append(unguarded_sentence(read, others) if isinstance(read, IdentifiedAccuracy)
                           else unguarded_gold_sentence(read, others))
        frame.attrs["caveats"] = caveats
        return frame

    def reported_interval(self, metric, options, hdi_prob: float):
        """The interval :meth:`summary` reports for the true accuracy, and a sentence saying
        why, when it is not the posterior's HDI (what :func:`bayeval.report.report` shows);
        None for other metrics and for a posterior without the fit's data.

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval import EvalData
        >>> from bayeval.annotators import AnnotatorPosterior
        >>> idata = az.from_dict(posterior={"x": np.zeros((1, 20))})
        >>> post = AnnotatorPosterior(EvalData([1.0, 0.0], predictions=[1, 0]), idata, lambda p: [0.9, 0.1])
        >>> post.reported_interval("accuracy", {}, 0.9) is None  # no fit behind it
        True
        """
        if metric != "accuracy" or options or getattr(self, "_observed", None) is None:
            return None
        return self._reported_accuracy(hdi_prob)

    def reported_reading(self, metric, options, hdi_prob: float) -> str | None:
        """The report's reading of the interval :meth:`reported_interval` gives the true accuracy:
        the range the annotations allow (without gold items: an identified set, joined with the
        posterior's interval) or the interval the gold items guard, neither a posterior probability
        interval; None where :meth:`reported_interval` is None. A sentence with the fields
        ``{metric}``, ``{lower}``, ``{upper}`` and ``{mean}``
        (:meth:`bayeval.core.posterior.BasePosterior.reported_reading`).

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval import EvalData
        >>> from bayeval.annotators import AnnotatorPosterior
        >>> idata = az.from_dict(posterior={"x": np.zeros((1, 20))})
        >>> post = AnnotatorPosterior(EvalData([1.0, 0.0], predictions=[1, 0]), idata, lambda p: [0.9, 0.1])
        >>> post.reported_reading("accuracy", {}, 0.9) is None  # no fit behind it
        True
        """
        if metric != "accuracy" or options or getattr(self, "_observed", None) is None:
            return None
        pct, check = f"{100 * hdi_prob:g}%", self.gold_check
        if check is None:  # no gold items: the identified set, as _accuracy_reading reports it
            return ("The annotations allow the {metric} to lie anywhere between {lower} and {upper} (posterior mean "
                    "{mean}): the range over every way the classifier's errors can overlap the annotators', joined "
                    f"with the posterior's {pct} interval -- an identified set, not a probability interval")
        if check["n_gold"] >= 1:  # the guarded reading
            n = int(check["n_gold"])
            return (f"Guarded by the {n} gold item{'s' if n != 1 else ''}, the {{metric}} lies between {{lower}} and "
                    f"{{upper}} (posterior mean {{mean}}): the smallest interval holding the posterior's {pct} "
                    "interval and the gold items' own -- not a posterior probability interval")
        return None

    def _reported_accuracy(self, hdi_prob: float, diagnosis: str | None = None):
        """``((lower, upper), sentence)`` when the reported interval of the true accuracy is
        not the posterior's own (gold items guard it, or there are none); else None."""
        reading = self._accuracy_reading(hdi_prob, diagnosis)
        return None if reading is None else reading[:2]

    def _accuracy_reading(self, hdi_prob: float, diagnosis: str | None = None):
        """``((lower, upper), sentence, reading)``: :meth:`_reported_accuracy`'s reading and what it
        reports (a :class:`GuardedAccuracy` with gold items, else the :class:`IdentifiedAccuracy`);
        None where it is the posterior's."""
        check = self.gold_check
        if check is not None and check["n_gold"] >= 1:
            draws = np.asarray(self.metric("accuracy").values, dtype=np.float64).ravel()
            g = guarded_reading(draws, int(check["right"]), int(check["n_gold"]), int(check["n_items"]),
                                hdi_prob, "hdi")
            return (g.lower, g.upper), (
                f"accuracy: the interval [{g.lower:.3f}, {g.upper:.3f}] holds the posterior's "
                f"[{g.posterior_lower:.3f}, {g.posterior_upper:.3f}] and the {g.n_gold} gold items' own "
                f"[{g.gold_lower:.3f}, {g.gold_upper:.3f}] (the guarded reading, as summary() reports it)."), g
        ident = self.identified_accuracy(prob=hdi_prob, diagnosis=diagnosis)
        if not ident.reported:
            return None
        return (ident.lower, ident.upper), identified_sentence(ident), ident

    def identified_accuracy(self, *, prob: float = HDI_PROB, diagnosis: str | None = None,
                            error_lift=None) -> IdentifiedAccuracy:
        """The classifier's true accuracy on these items as far as the annotations identify it.

        Without gold items, how the classifier's errors overlap the annotators' comes from
        the priors (the fit's true accuracy is then *prior-dominated*, see
        :meth:`prior_sensitivity`), and the posterior's interval can be narrow and wrong
        when the errors are shared more than the model expects. What the annotations
        identify better is how often each annotator column is right. The *identified set*
        is the range of the classifier's accuracy over every assignment of true classes in
        which each annotator column is right on at least a floor share of its items --
        whatever the overlap: the bounds ``A_model -+ (1 - A_annotator)`` of
        :func:`~bayeval.annotators.bounds.true_accuracy_bounds`, taken jointly over the
        columns. The floors are the annotators' accuracies on these items from the
        posterior's draws of the true classes, at the lower quantile at which all columns
        hold together with probability ``prob``.

        Without gold items :meth:`summary` reports ``[lower, upper]`` (the posterior's
        interval joined with this set) in its ``true_accuracy`` row, and
        ``summary(["accuracy"])`` the same: on three real crowds (one, three and seven
        references) it covered the true accuracy in 46 of 46 trials, 0.26--0.71 wide,
        where the posterior's interval covered 36 (0 of 6 with seven references on one
        crowd, 0.03 wide; ``benchmarks/results/annotator_real_nogold.md``). An
        assumption about the overlap narrows it (independent errors, or the model's priors,
        give the posterior's interval), and so do gold items: ``gold_to_halve`` random gold
        items give an interval of their own half as wide (0 where ``[lower, upper]`` has no
        width: the floors then take every annotator column to be right on every item, which
        raters sharing all their errors would look like too, and the caveat says what gold
        items would check instead). The set leaves the overlap of the classifier's errors
        with the annotators' open, but its floors come from the model's posterior, so it rests
        on the model's picture of the annotators. See ``docs/models.md``.

        The overlap assumption it states (``assumed_lower``, ``assumed_upper``; the
        caveat of :meth:`summary` quotes it): on the items an annotator column gets wrong,
        the classifier's error rate is 1 to 2 times its overall rate (``ERROR_LIFT``:
        shared errors, at most twice as often as by chance). ``error_lift=(low, high)``
        computes the set under such an assumption instead (``lower``, ``upper`` then hold
        only if it does; where no assignment meets it, the set without it is returned, with
        ``error_lift`` None).

        Parameters
        ----------
        prob : float, default 0.9
            Probability of the posterior's interval (HDI) and of the floors.
        diagnosis : str, optional
            The prior-sensitivity diagnosis of the true accuracy, when already computed
            (``""``: not prior-dominated); computed when left out. It is kept in
            ``reason``; the set is reported without gold items whatever it says.
        error_lift : tuple of two floats, optional
            ``(low, high)``, ``0 <= low <= 1 <= high``: compute the set under the assumption
            that on the items an annotator column gets wrong, the classifier's error rate is
            ``low`` to ``high`` times its rate over all items. None (the default): any overlap.

        Returns
        -------
        IdentifiedAccuracy

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.annotators import AnnotationData, AnnotatorError
        >>> rng = np.random.default_rng(0)
        >>> z = rng.integers(0, 2, 300)
        >>> pred = np.where(rng.random(300) < 0.85, z, 1 - z)
        >>> ref = np.where(rng.random(300) < 0.9, z, 1 - z)
        >>> post = AnnotatorError().fit(AnnotationData(pred, ref), draws=200, tune=200, chains=2,
        ...                             random_seed=1, progressbar=False, warn=False)
        >>> r = post.identified_accuracy()
        >>> r.reported, r.set_lower <= r.posterior_lower, r.upper - r.lower > 0.1
        (True, True, True)
        >>> bool(r.lower <= r.assumed_lower and r.assumed_upper <= r.upper)  # the stated assumption narrows it
        True
        >>> post.identified_accuracy(error_lift=(1, 2)).upper == r.assumed_upper
        True
        """
        prob = V.as_probability(prob, "prob", open_interval=True)
        error_lift = _as_error_lift(error_lift)
        obs = getattr(self, "_observed", None)
        if obs is None:
            raise ValueError(
                "The identified set needs the fit's annotations: use a posterior returned by "
                "AnnotatorError().fit(AnnotationData(...)) (or bayeval.load of one)."
            )
        acc, ref = self._accuracy_draws_by_rater(obs)
        p_lo, p_hi = (float(v) for v in hdi(acc, prob))
        floors = joint_floors(ref, prob)
        k = int(getattr(self.model_spec, "n_classes", 2))
        s_lo, s_hi = accuracy_range(obs.patterns, obs.counts, obs.pattern_gold, floors, k, lift=error_lift)
        if error_lift is not None and not np.isfinite(s_lo):
            # the assumption contradicts the annotations: nothing narrower than the set without it
            error_lift = None
            s_lo, s_hi = accuracy_range(obs.patterns, obs.counts, obs.pattern_gold, floors, k)
        if not np.isfinite(s_lo):  # no assignment meets the floors (cannot happen with draws' own floors)
            s_lo, s_hi = p_lo, p_hi
        if diagnosis is None:
            diagnosis = "" if self.gold_check is not None else self._accuracy_diagnosis()
        # reported whenever there are no gold items: on real crowds the posterior's interval
        # missed the truth also where the fit did not flag it (seven references, errors shared)
        reported = self.gold_check is None
        lower, upper = min(p_lo, s_lo), max(p_hi, s_hi)
        n_gold = 0  # no width: nothing for gold items to halve (the caveat says what they would check)
        if upper - lower >= ZERO_WIDTH:
            n_gold = gold_to_width(float(acc.mean()), obs.n_items, (upper - lower) / 2.0, prob)
        a_lo = a_hi = float("nan")
        if error_lift is None:  # the range under the stated assumption, for the caveat
            a_lo, a_hi = accuracy_range(obs.patterns, obs.counts, obs.pattern_gold, floors, k, lift=ERROR_LIFT)
            if np.isfinite(a_lo):
                a_lo, a_hi = min(p_lo, a_lo), max(p_hi, a_hi)
        return IdentifiedAccuracy(float(acc.mean()), float(lower), float(upper), p_lo, p_hi, float(s_lo),
                                  float(s_hi),
                                  tuple(float(f) for f in floors), prob, reported, n_gold, diagnosis,
                                  error_lift, float(a_lo), float(a_hi))

    def _accuracy_diagnosis(self) -> str:
        """The prior-sensitivity diagnosis of the true accuracy (``""``, ``"prior-dominated"``...)."""
        sens = power_scaling(self.model_spec, self).sensitivity()
        return str(sens.loc["true_accuracy", "diagnosis"]) if "true_accuracy" in sens.index else ""

    def _accuracy_draws_by_rater(self, obs) -> tuple[np.ndarray, np.ndarray]:
        """Per draw: the classifier's accuracy on these items, and each annotator column's
        (on the items it labelled)."""
        ann = obs.annotations
        seen = ~np.isnan(ann)
        cols = [(np.flatnonzero(seen[:, j]), ann[seen[:, j], j]) for j in range(ann.shape[1])]
        pred = obs.predictions
        acc = np.empty((self.n_chains, self.n_draws))
        ref = np.empty((self.n_chains, self.n_draws, ann.shape[1]))
        for chain, draws, z in self._label_chunks():
            acc[chain, draws] = (z == pred).mean(axis=1)
            for j, (idx, lab) in enumerate(cols):
                ref[chain, draws, j] = (z[:, idx] == lab).mean(axis=1)
        return acc.ravel(), ref.reshape(-1, ann.shape[1])

    def prior_sensitivity(self, *, scales=(0.5, 2.0), hdi_prob: float = HDI_PROB) -> pd.DataFrame:
        """How the reported accuracies move when the priors are made weaker or stronger.

        Without gold items, one reference per item fixes only how often classifier and
        reference agree; how their errors overlap -- and so where the true accuracy lies
        -- comes from the priors (the *difficulty* priors above all). This table says how
        much: every prior density ``p(theta)`` is raised to a power ``s`` (``s < 1``
        weakens it, ``s > 1`` sharpens it) and the posterior is recomputed from the same
        draws by Pareto-smoothed importance weights ``p(theta)^(s - 1)`` (power-scaling,
        Kallioinen et al. 2023; no refit). The draws of the gold-only model that a
        stacked fit mixes in do not depend on these priors and keep weight 1.

        Parameters
        ----------
        scales : sequence of float, default (0.5, 2.0)
            Powers of the prior to show besides the fitted one (1).
        hdi_prob : float, default 0.9

        Returns
        -------
        pandas.DataFrame
            Index ``(quantity, prior_scale)``: ``true_accuracy`` (on these items),
            ``model_accuracy`` (population), ``annotator_accuracy[...]``,
            ``error_correlation[...]``, each at scale 1 and at each of ``scales``.
            Columns ``mean, sd, hdi_<lo>%, hdi_<hi>%`` (of the reweighted posterior),
            ``pareto_k`` (of the weights; above 0.7 the row is unreliable and is left
            NaN), ``prior_sensitivity`` and ``likelihood_sensitivity`` (the
            power-scaling indices of ``arviz.psens``: the distance between the
            posteriors at scales ``1/1.01`` and ``1.01``, per unit of log2 scale), and
            ``diagnosis``: ``"prior-data conflict"`` (both indices >= 0.05),
            ``"prior-dominated"`` (prior index >= 0.05, likelihood index < 0.05: the
            data say little and the prior decides) or ``""``.

        Examples
        --------
        >>> import numpy as np
        >>> from bayeval.annotators import AnnotationData, AnnotatorError
        >>> rng = np.random.default_rng(0)
        >>> z = rng.integers(0, 2, 300)
        >>> pred = np.where(rng.random(300) < 0.85, z, 1 - z)
        >>> ref = np.where(rng.random(300) < 0.9, z, 1 - z)
        >>> spec = AnnotatorError()
        >>> post = spec.fit(AnnotationData(pred, ref), draws=200, tune=200, chains=2,
        ...                 random_seed=1, progressbar=False, warn=False)
        >>> table = post.prior_sensitivity()
        >>> table.loc[("true_accuracy", 1.0), "diagnosis"]  # no gold, one reference
        'prior-dominated'
        """
        hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        scales = [float(x) for x in np.atleast_1d(np.asarray(scales, dtype=np.float64))]
        if not scales or any(not (np.isfinite(x) and x > 0) for x in scales):
            raise ValueError(f"`scales` must be positive numbers (powers of the prior), got {scales}.")
        return power_scaling(self.model_spec, self).table(scales, hdi_prob)


def _class_counts(z: np.ndarray, pred: np.ndarray, k: int):
    """Per draw and class: true count, predicted count, true positives. z: (rows, n)."""
    true_n = np.stack([(z == c).sum(axis=1) for c in range(k)], axis=1).astype(np.float64)
    pred_n = np.bincount(pred, minlength=k).astype(np.float64)
    tp = np.stack([(z[:, pred == c] == c).sum(axis=1) for c in range(k)], axis=1).astype(np.float64)
    return true_n, np.broadcast_to(pred_n, true_n.shape), tp


def _ratio(num, den, zero_division):
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    return np.where(den > 0, out, zero_division)


class CategoricalPosterior(AnnotatorPosterior):
    """Posterior over ``K``-class true labels and the classifier's metrics on them.

    The multi-class counterpart of :class:`bayeval.Posterior`: parameter draws plus
    a function giving ``P(z_i = k | theta)`` for every item and class; label
    draws ``(chain, draw, item)`` hold class indices (int8), generated chunk by
    chunk by :class:`bayeval.Posterior`'s label-draw engine, each draw ``(chain, d)``
    from its own random stream derived from the seed -- so results do not depend on
    the chunk size, and the draws are kept (``ceil(log2 K)`` bits per label) when they
    fit, as there. Gold items keep their
    class in every draw. ``data`` holds only the predictions (as scores); gold
    and predictions are the attributes :attr:`gold` and :attr:`predictions`.

    It is what :meth:`AnnotatorError.fit <bayeval.annotators.model.AnnotatorError.fit>`
    returns for ``K > 2``, and reports the fit as :class:`AnnotatorPosterior` does
    (``summary()``, ``check()``, ``guarded_accuracy()``, ``rectified_accuracy()``,
    ``prior_sensitivity()``); ``summary(metrics)`` tabulates multi-class metrics.

    Parameters
    ----------
    predictions : array_like of shape (n_items,)
        The classifier's predicted classes, ``0 .. n_classes - 1``.
    idata : arviz.InferenceData
        Parameter draws (``posterior`` group, dims ``chain, draw, ...``).
    class_probability : callable
        ``class_probability(params) -> (n_chunk, n_items, n_classes)``, ``params``
        as for :class:`bayeval.Posterior`.
    gold : array_like of shape (n_items,), optional
        Known classes, NaN where unknown.
    n_classes : int
    random_seed : int, optional
    model : str, optional
    population : callable, optional
        ``population(metric) -> DataArray``.
    item_ids : array_like of shape (n_items,), optional
        Unique ids of the items (``data.item_ids``; default their positions).

    Examples
    --------
    >>> import arviz as az
    >>> import numpy as np
    >>> from bayeval.annotators import CategoricalPosterior
    >>> idata = az.from_dict(posterior={"x": np.zeros((2, 100))})
    >>> p = np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.2, 0.2, 0.6]])
    >>> post = CategoricalPosterior([0, 1, 1], idata, lambda params: p, gold=[0, np.nan, np.nan],
    ...                             n_classes=3, random_seed=0)
    >>> post.metric("recall").dims
    ('chain', 'draw', 'class')
    >>> round(float(post.metric("accuracy").mean()), 1)
    0.6
    """

    def __init__(
        self,
        predictions,
        idata: az.InferenceData,
        class_probability: Callable[[Mapping[str, np.ndarray]], np.ndarray],
        *,
        gold=None,
        n_classes: int,
        random_seed: int | None = None,
        model: str | None = None,
        population: Callable[..., xr.DataArray] | None = None,
        item_ids=None,
    ):
        k = V.as_positive_int(n_classes, "n_classes", minimum=2)
        if k > MAX_CLASSES:
            raise ValueError(f"`n_classes` must be <= {MAX_CLASSES}, got {k}.")
        pred, _ = to_float_matrix(predictions, "predictions")
        if pred.ndim != 1 or pred.size == 0:
            raise ValueError(f"`predictions` must be a non-empty 1-D array, got shape {pred.shape}.")
        check_classes(pred, "predictions", k, allow_nan=False)
        if gold is None:
            g = np.full(pred.size, np.nan)
        else:
            g, _ = to_float_matrix(gold, "gold")
            if g.ndim != 1:
                raise ValueError(f"`gold` must be 1-D, got shape {g.shape}.")
            V.check_same_length(pred.size, "gold", g.size, reference="predictions")
            check_classes(g, "gold", k, allow_nan=True)
        if not callable(class_probability):
            raise TypeError("`class_probability` must be a callable params -> (n, n_items, K).")
        self.n_classes = k  # read by the engine's set-up (the bit planes of its cache)
        self.predictions = pred.astype(np.int64)
        self.gold = g
        for a in (self.predictions, self.gold):
            a.setflags(write=False)
        super().__init__(
            EvalData(pred, item_ids=item_ids), idata, class_probability, random_seed=random_seed, model=model,
            population=population,
        )

    # ------------------------------------------------------------ label draws

    def _class_probabilities(self, chain: int, draws: slice) -> np.ndarray:
        m, n, k = draws.stop - draws.start, self.data.n_items, self.n_classes
        p = np.asarray(self._probability(self._params(chain, draws)), dtype=np.float64)
        if p.shape not in ((n, k), (m, n, k)):
            raise ValueError(
                f"The class probability function returned shape {p.shape}; expected ({m}, {n}, {k}) "
                f"or ({n}, {k})."
            )
        if not np.all(np.isfinite(p)) or p.min() < 0:
            raise ValueError("The class probabilities must be finite and >= 0.")
        return np.broadcast_to(p, (m, n, k))

    # the label draws: Posterior's engine, on class probabilities (m, n, K)

    def _fixed_labels(self) -> tuple[np.ndarray, np.ndarray]:
        """The gold items, and their classes."""
        idx = np.flatnonzero(~np.isnan(self.gold))
        return idx, self.gold[idx].astype(np.int8)

    def _draw_probabilities(self, chain: int, draws: slice) -> np.ndarray:
        return self._class_probabilities(chain, draws)

    def _label_work_bytes(self) -> int:
        return 16 * self.n_classes + 9  # float64 probabilities and their cumulative sums, int8 label

    def item_probability(self) -> xr.DataArray:
        """Posterior probability of each class for each item (gold items: their class).

        Returns
        -------
        xarray.DataArray
            Dims ``(item, class)``.

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval.annotators import CategoricalPosterior
        >>> idata = az.from_dict(posterior={"x": np.zeros((1, 4))})
        >>> post = CategoricalPosterior([0, 2], idata, lambda params: np.full((2, 3), 1 / 3),
        ...                             gold=[np.nan, 2], n_classes=3)
        >>> post.item_probability().values.round(2).tolist()
        [[0.33, 0.33, 0.33], [0.0, 0.0, 1.0]]
        """
        n, k = self.data.n_items, self.n_classes
        total = np.zeros((n, k))
        for chain, draws in self._chunk_plan(None):
            total += self._class_probabilities(chain, draws).sum(axis=0)
        p = total / total.sum(axis=1, keepdims=True)
        p[self._fixed] = 0.0
        p[self._fixed, self._fixed_values] = 1.0
        return xr.DataArray(
            p,
            dims=("item", "class"),
            coords={"item": self.data.item_ids, "class": np.arange(k)},
            name="p_class",
        )

    # --------------------------------------------------------------- metrics

    def metric(self, metric, *, chunk_size: int | None = None, zero_division: float = 0.0, **kwargs) -> xr.DataArray:
        """The posterior of a multi-class metric of the predictions on these items.

        Parameters
        ----------
        metric : str or callable
            ``"accuracy"`` (dims ``chain, draw``); per class (dims ``chain, draw,
            class``): ``"precision"`` (of predicting class c), ``"recall"`` (the
            accuracy on the items whose true class is c), ``"f_score"`` (F1) and
            ``"class_accuracy"`` (one-vs-rest accuracy: agreement of "predicted
            c" with "is c" over all items). Or a callable
            ``f(labels, predictions, **kwargs)`` mapping class draws
            ``(rows, n_items)`` to ``(rows,)`` or ``(rows, m)``.
        chunk_size : int, optional
            Draws per chunk (memory only; results do not change).
        zero_division : float, default 0.0
            Value of precision/recall/F when the denominator is 0.
        **kwargs
            Options of a callable metric.

        Returns
        -------
        xarray.DataArray

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval.annotators import CategoricalPosterior
        >>> idata = az.from_dict(posterior={"x": np.zeros((1, 3))})
        >>> post = CategoricalPosterior([0, 1, 2, 2], idata, lambda params: np.eye(3)[[0, 1, 2, 1]],
        ...                             n_classes=3)
        >>> post.metric("precision").values[0, 0].tolist()
        [1.0, 1.0, 0.5]
        """
        k = self.n_classes
        if isinstance(metric, str):
            V.check_choice(metric, "metric", _CLASS_METRICS)
            if kwargs:
                raise TypeError(f"Metric {metric!r} takes no options besides zero_division; got {sorted(kwargs)}.")
            name, fn = metric, None
        elif callable(metric):
            name, fn = getattr(metric, "__name__", "custom"), metric
        else:
            raise TypeError(f"`metric` must be one of {list(_CLASS_METRICS)} or a callable, got {metric!r}.")
        pred = self.predictions
        n = self.data.n_items
        results = {}
        for chain, draws, z in self._label_chunks(chunk_size):
            if fn is not None:
                val = np.asarray(fn(z, pred, **kwargs), dtype=np.float64)
                if val.shape[:1] != (z.shape[0],):
                    raise ValueError(
                        f"Custom metric {name!r} returned shape {val.shape}; it must return one value "
                        f"(or one array) per label row, i.e. a leading axis of {z.shape[0]}."
                    )
            elif name == "accuracy":
                val = (z == pred).mean(axis=1)
            else:
                true_n, pred_n, tp = _class_counts(z, pred, k)
                if name == "precision":
                    val = _ratio(tp, pred_n, zero_division)
                elif name == "recall":
                    val = _ratio(tp, true_n, zero_division)
                elif name == "f_score":
                    val = _ratio(2 * tp, true_n + pred_n, zero_division)
                else:
                    val = (n - true_n - pred_n + 2 * tp) / n
            results[(chain, draws.start)] = val
        first = next(iter(results.values()))
        out = np.empty((self.n_chains, self.n_draws) + first.shape[1:])
        for (chain, start), val in results.items():
            out[chain, start : start + val.shape[0]] = val
        coords = {"chain": np.arange(self.n_chains), "draw": np.arange(self.n_draws)}
        if fn is None and name != "accuracy":
            dims = ("chain", "draw", "class")
            coords["class"] = np.arange(k)
        else:
            dims = ("chain", "draw") + tuple(f"{name}_dim_{j}" for j in range(out.ndim - 2))
        return xr.DataArray(out, dims=dims, coords=coords, name=name)

    def _metric_summary(self, metrics, *, hdi_prob: float = HDI_PROB, **kwargs) -> pd.DataFrame:
        """Mean, sd and HDI of multi-class metrics (one row per metric and class): what
        ``summary(metrics)`` gives.

        Parameters
        ----------
        metrics : str or list of str or callables
            Names accepted by :meth:`metric`.
        hdi_prob : float, default 0.9
        **kwargs
            Passed to :meth:`metric`.

        Returns
        -------
        pandas.DataFrame

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval.annotators import CategoricalPosterior
        >>> idata = az.from_dict(posterior={"x": np.zeros((1, 20))})
        >>> post = CategoricalPosterior([0, 1, 2], idata, lambda params: np.full((3, 3), 1 / 3),
        ...                             n_classes=3, random_seed=0)
        >>> post.summary(["accuracy", "recall"]).index.tolist()
        ['accuracy', 'recall[class=0]', 'recall[class=1]', 'recall[class=2]']
        """
        hdi_prob = V.as_probability(hdi_prob, "hdi_prob", open_interval=True)
        if isinstance(metrics, str) or callable(metrics):
            metrics = [metrics]
        rows = []
        for metric in metrics:
            da = self.metric(metric, **kwargs)
            rows.extend(summary_rows(da.name, da, hdi_prob, ("chain", "draw")))
        return self._with_reported_accuracy(summary_frame(rows, hdi_prob), hdi_prob)

    def to_inference_data(self, metrics=("accuracy",), **kwargs) -> az.InferenceData:
        """A copy of :attr:`idata` with a ``metrics`` group (as :meth:`bayeval.Posterior.to_inference_data`),
        by default the accuracy's draws.

        Examples
        --------
        >>> import arviz as az
        >>> import numpy as np
        >>> from bayeval.annotators import CategoricalPosterior
        >>> idata = az.from_dict(posterior={"x": np.zeros((1, 20))})
        >>> post = CategoricalPosterior([0, 1, 2], idata, lambda params: np.full((3, 3), 1 / 3), n_classes=3)
        >>> list(post.to_inference_data(["accuracy", "recall"]).metrics.data_vars)
        ['accuracy', 'recall']
        """
        return super().to_inference_data(metrics, **kwargs)

    def __repr__(self) -> str:
        return (
            f"CategoricalPosterior(model={self.model!r}, n_classes={self.n_classes}, "
            f"chains={self.n_chains}, draws={self.n_draws}, items={self.data.n_items}, "
            f"gold={self._fixed.size})"
        )


def _as_error_lift(error_lift):
    """``None`` or a checked ``(low, high)`` with ``0 <= low <= 1 <= high`` (as floats)."""
    if error_lift is None:
        return None
    try:
        low, high = (float(v) for v in error_lift)
    except (TypeError, ValueError):
        raise TypeError(
            f"`error_lift` must be None or a pair (low, high) such as (1, 2), got {error_lift!r}."
        ) from None
    if not (np.isfinite(low) and np.isfinite(high) and 0.0 <= low <= 1.0 <= high):
        raise ValueError(
            f"`error_lift` must be (low, high) with 0 <= low <= 1 <= high (1 = independent errors), "
            f"got {error_lift!r}."
        )
    return low, high
