"""The report of the default model (a stack of calibration curves): the threshold's advice
when every item is vetted, the candidates' table when none is, the effective sample size
of the draws the stack takes from each candidate, and the sentence on candidates whose
diagnostics the stack's check does not judge."""


import arviz as az
import numpy as np
import pandas as pd
import pytest

from bayeval import EvalData, Posterior
from bayeval.core import sampling as _sampling
from bayeval.models import StackedPosterior
from bayeval.report import _constraint_sentences, report

IMPOSSIBLE = {"min_precision": 0.99, "min_recall": 0.9}


@pytest.fixture(scope="module")
def all_vetted(small_default_fit):
    return small_default_fit("all")


@pytest.fixture(scope="module")
def none_vetted(small_default_fit):
    return small_default_fit("none")


# ------------------------------------------------ 1. the threshold, every item vetted


def test_unmet_constraint_on_an_all_vetted_pool_does_not_advise_vetting(all_vetted):
    post, truth = all_vetted
    for cons in (IMPOSSIBLE, {**IMPOSSIBLE, "prob": 0.8}):
        r = report(post, title="t", truth=truth, constraints=cons)
        (problem,) = r.warnings["constraints"]
        # before: "... Do not deploy it as meeting the constraint: relax the constraint or vet more items."
        assert "vet more" not in " ".join(r.text) and "vet more" not in problem
        assert problem.startswith("No candidate threshold that flags at least 10 items meets the constraint on "
                                  "these items. The closest, t = ")
        assert problem.endswith("Every item is vetted, so more labels cannot change this. Relax the constraint "
                                "(a lower minimum precision or recall, or fewer than 10 flagged items) or score "
                                "the items with another classifier.")


def test_constraint_sentences_advise_vetting_only_while_items_are_unvetted():
    table = pd.DataFrame({"threshold": [0.4], "probability": [0.0], "required probability": [0.8],
                          "flagged items": [30], "fewest allowed": [10], "items": [120]},
                         index=pd.Index(["precision >= 0.99"], name="constraint"))
    for required, prob in ((0.8, 0.0), (np.nan, 0.0), (np.nan, 0.3)):
        table["required probability"], table["probability"] = [required], [prob]
        _, some = _constraint_sentences(table, 400)
        _, every = _constraint_sentences(table, 400, all_vetted=True)
        assert some.endswith("relax the constraint or vet more items.")
        assert "vet more" not in every and every.endswith(
            "Every item is vetted, so more labels cannot change this. Relax the constraint (a lower minimum "
            "precision or recall, or fewer than 10 flagged items) or score the items with another classifier.")


# ------------------------------------------------ 2. the candidates' table, nothing vetted


def test_no_vetted_item_shows_no_weights_as_if_learned(none_vetted, all_vetted):
    post, truth = none_vetted
    assert post.comparison["weight"].tolist() == [0.5, 0.5]  # equal: no label to weigh them by
    assert post.comparison["elpd_loo"].isna().all()
    r = report(post, title="t", truth=truth, metrics=["average_precision"])
    assert "calibration" not in r.tables  # before: the table, its weights 0.5 / 0.5, every other cell NaN
    (note,) = r.notes["calibration"]
    assert note == ("No item is vetted, so no label weighs the candidate curves: the stack draws equally "
                    "from calibration/logistic and calibration/monotone, each resting on its prior.")
    assert "weighs the candidate curves" not in r.to_markdown().split("## Sampler diagnostics")[1]
    # with vetted labels the table is there, and this note is not
    r = report(all_vetted[0], title="t", metrics=["average_precision"])
    assert "calibration" in r.tables and not r.notes.get("calibration")


# ------------------------------------------------ 3. the ESS of the draws the stack takes


def test_subsample_ess_matches_the_variance_of_random_picks_of_a_chain():
    from bayeval.core._diagnostics import subsample_ess

    # an AR(1) chain (phi = 0.8, true ESS n (1 - phi) / (1 + phi) = 111 of 1,000 draws): the mean of m
    # draws picked at random from it has variance sigma^2 / subsample_ess(111, 1000, m)
    rng = np.random.default_rng(1)
    phi, n, reps = 0.8, 1000, 4000
    x = np.empty((reps, n))
    x[:, 0] = rng.normal(size=reps) / np.sqrt(1 - phi**2)
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + rng.normal(size=reps)
    ess = n * (1 - phi) / (1 + phi)
    for m in (50, 300, 900):
        picks = np.array([rng.choice(n, m, replace=False) for _ in range(reps)])
        var = np.take_along_axis(x, picks, 1).mean(axis=1).var()
        expected = (1 / (1 - phi**2)) / subsample_ess(ess, n, m)
        # the variance of a sample variance of `reps` near-normal means: sd 2/sqrt(reps) relative, 3.2%
        assert var == pytest.approx(expected, rel=4 * np.sqrt(2 / reps)), m
    assert subsample_ess(400.0, 400, 107) == pytest.approx(107.0)  # independent draws: the draws taken
    assert subsample_ess(400.0, 400, 400) == pytest.approx(400.0)
    assert subsample_ess(50.0, 100, 300, replace=True) == pytest.approx(1 / (1 / 50 + 1 / 300))


def test_per_parameter_rows_give_the_ess_of_the_draws_the_stack_takes(all_vetted):
    post, _ = all_vetted
    table = post.diagnostics()
    which = post.idata.posterior["candidate"].values.ravel()
    for k, name in enumerate(post.candidates):
        rows = table[table.index.str.startswith(f"{name}: ")]
        taken = int((which == k).sum())
        assert 0 < taken < 400 and (rows["stack_draws"] == taken).all()
        # the candidate's own ESS (what the check judges) is of all its 400 kept draws; the stack takes fewer
        assert (rows["ess_bulk"] == 400).all()
        assert rows["stack_ess_bulk"].to_numpy() == pytest.approx(taken, abs=0.5)
    r = report(post, title="t", metrics=["average_precision"])
    shown = r.tables["diagnostics_by_parameter"]
    assert list(shown.columns) == ["r_hat", "bulk ESS, all its draws", "tail ESS, all its draws", "weight",
                                   "draws in the stack", "bulk ESS, draws in the stack"]
    assert any(n.startswith("Per parameter, a candidate's bulk and tail ESS are those of all its draws")
               for n in r.notes["diagnostics"])


# ------------------------------------------------ 4. why a low-weight candidate does not warn


def _stack_with_a_shaky_candidate(weights):
    """Two candidates of 2 x 1,000 draws; the second's chains disagree (r_hat about 1.02)."""
    rng = np.random.default_rng(0)
    q = rng.uniform(0.05, 0.95, 200)
    lab = np.where(np.arange(200) < 60, 1.0 * (rng.random(200) < q), np.nan)
    data = EvalData(q, lab)

    class Cand(Posterior):
        def check(self, *, warn=True):
            from bayeval.core._diagnostics import check_convergence

            return check_convergence(self.idata, _sampling.SamplingInfo("pymc"), ["a"], warn=False)

    cands = {}
    for name, shift in (("good", 0.0), ("shaky", 0.25)):
        a = rng.normal(size=(2, 1000)) + np.array([[0.0], [shift]])
        cands[name] = Cand(data, az.from_dict(posterior={"a": a}), lambda p: np.broadcast_to(q, (len(p["a"]), 200)),
                           random_seed=0, model=name)
    comp = pd.DataFrame({"weight": weights, "flagged": [False, False], "z": [0.0, 0.0]},
                        index=pd.Index(["good", "shaky"], name="candidate"))
    return StackedPosterior(data, cands, comp, chains=2, draws=200, random_seed=0)


def test_report_says_why_a_low_weight_candidate_does_not_warn():
    post = _stack_with_a_shaky_candidate([0.97, 0.03])
    assert post.check(warn=False)["unchecked"] == {"shaky": 0.03}
    r = report(post, title="t", metrics=["average_precision"])
    assert r.tables["diagnostics_by_parameter"].loc["shaky: a", "r_hat"] > 1.01 and not r.warnings.get("diagnostics")
    sentence = ("shaky (weight 0.030) is not judged by the check: it gives only 3% of the stack's draws (the check "
                "judges candidates above 10%), too few to move a number, so its diagnostics in the table above "
                "do not warn.")
    assert sentence in r.notes["diagnostics"]
    md = r.to_markdown()
    assert md.count("is not judged by the check") == 1  # in the diagnostics section, nowhere else
    assert md.index("is not judged by the check") > md.index("## Sampler diagnostics")
    # every candidate judged: no such sentence
    r = report(_stack_with_a_shaky_candidate([0.5, 0.5]), title="t", metrics=["average_precision"])
    assert "is not judged by the check" not in r.to_markdown()


def test_recalibration_on_an_all_vetted_pool_does_not_advise_vetting(all_vetted, none_vetted):
    """`recalibrate`'s verdict (and `bayeval threshold`'s warning) said "relax the constraint or vet more
    items" with every item vetted, as the report did."""
    from bayeval import recalibrate

    cons = {k: v for k, v in IMPOSSIBLE.items() if k in ("min_precision", "min_recall")}
    for prob in (None, 0.8):
        every = recalibrate(all_vetted[0], prob=prob, **cons)
        assert not every.met and every.all_vetted
        assert "vet more" not in every.verdict + every.advice
        assert "every item is vetted, so more labels cannot change this" in (every.verdict if prob is None
                                                                            else every.advice)
        some = recalibrate(none_vetted[0], prob=prob, **cons)
        assert not some.all_vetted and some.advice == "relax the constraint or vet more items."
