"""Caveats: what the labels and scores cannot tell a model, said beside the interval."""

import numpy as np
import pytest

import bayeval as be


def _data(scores, n_vet, n_pos, seed=0):
    rng = np.random.default_rng(seed)
    y = np.full(len(scores), np.nan)
    idx = rng.choice(len(scores), n_vet, replace=False)
    y[idx] = 0
    y[idx[:n_pos]] = 1
    return be.EvalData(scores, y)


def test_no_caveat_for_spread_scores_and_enough_of_each_class():
    s = np.random.default_rng(1).beta(1, 3, 500)
    assert _data(s, 40, 10).caveats() == []


def test_few_positives_and_few_negatives_are_named_with_what_to_vet():
    s = np.random.default_rng(1).beta(1, 3, 500)
    c = _data(s, 30, 2).caveats()
    assert len(c) == 1 and c[0].startswith("only 2 of the 30 vetted labels are positive") and "design" in c[0]
    # on probabilities the prior takes the scores as calibrated: the caveat says an under-confident
    # top can make P@K and AP miss, not only widen (margins get the prevalence-centred prior instead)
    assert "can miss the truth" in c[0]
    margins = _data(np.random.default_rng(1).normal(size=500), 30, 2).caveats()
    assert margins[0].startswith("only 2 of the 30") and "can miss the truth" not in margins[0]
    c = _data(s, 30, 27).caveats()
    assert len(c) == 1 and c[0].startswith("only 3 of the 30 vetted labels are negative")
    # none at all is the extreme case of a handful: said too (it used to be left to the calibration
    # check, which the report read as a sampler problem that a longer run would fix)
    (c,) = _data(s, 30, 0).caveats()
    assert c.startswith("none of the 30 vetted labels is positive") and "Vet items from the top" in c
    assert _data(s, 30, 30).caveats()[0].startswith("none of the 30 vetted labels is negative")
    (c,) = _data(s, 0, 0).caveats()  # nothing vetted: said too (it was left to the fit's own warning)
    assert c.startswith("no vetted labels: every interval is the prior's") and "Vet some items first" in c


def test_squeezed_and_saturated_probabilities():
    rng = np.random.default_rng(2)
    squeezed = rng.uniform(0.15, 0.48, 800)
    c = _data(squeezed, 40, 10).caveats()
    assert len(c) == 1 and "squeezed into [0.15, 0.48]" in c[0] and "transform='standardize'" in c[0]
    sat = rng.uniform(0.01, 0.99, 800)
    sat[rng.choice(800, 160, replace=False)] = 1.0  # exactly 20%
    c = _data(sat, 40, 10).caveats()
    assert len(c) == 1 and c[0].startswith("20% of the scores are exactly 0 or 1")
    # it said "The intervals hold for the ranking as given", while naive Bayes' saturated probabilities
    # on breast cancer with 5 labels gave AP intervals [0.99, 1] around a true 0.970
    assert "hold for the ranking" not in c[0] and "too narrow" in c[0] and "over-confident" in c[0]
    # margins are not probabilities: neither check applies
    assert _data(rng.normal(0, 0.05, 800), 40, 10).caveats() == []


def test_scores_that_are_all_equal_are_said_to_rank_nothing():
    """Constant probabilities were called "squeezed into [0.30, 0.30]" and constant margins got no
    word at all; neither ranks any item above another."""
    for value in (0.3, -1.0):
        (c,) = _data(np.full(300, value), 40, 10).caveats()
        assert c.startswith(f"all 300 scores are equal ({value:g})") and "no threshold can separate" in c
    # one distinct value more and the scores rank again: no such caveat
    assert _data(np.r_[np.full(299, 0.3), 0.9], 40, 10).caveats()[0].startswith("the probabilities are squeezed")


def test_summary_carries_the_caveats():
    s = np.random.default_rng(3).beta(1, 3, 300)
    d = _data(s, 30, 2)
    post = be.Posterior.from_probabilities(d, s, draws=50, random_seed=0, check=False)
    tab = post.summary()
    assert tab.attrs["caveats"] == d.caveats() and len(tab.attrs["caveats"]) == 1


def test_fit_transform_sets_the_default_candidates_feature():
    rng = np.random.default_rng(4)
    s = rng.uniform(0.15, 0.48, 400)
    y = np.full(400, np.nan)
    y[:40] = rng.random(40) < (s[:40] - 0.1)
    post = be.fit(be.EvalData(s, y), transform="standardize", random_seed=0, draws=200, warn=False)
    assert all(c.info["scale"] == "standardize" for c in post.candidates.values())
    with pytest.raises(ValueError, match="transform"):
        be.fit(be.EvalData(s, y), transform="probit")
    with pytest.raises(ValueError, match="own `candidates`"):
        be.fit(be.EvalData(s, y), transform="standardize", candidates=[be.models.Calibration()])


def _few_positive_post():
    s = np.random.default_rng(3).beta(1, 3, 300)
    d = _data(s, 30, 2)
    return d, be.Posterior.from_probabilities(d, s, draws=50, random_seed=0, check=False)


def test_report_shows_the_caveats_in_a_warning_box_by_the_metric_table():
    d, post = _few_positive_post()
    r = be.report(post, title="t")
    (caveat,) = d.caveats()
    assert r.warnings["metrics"] == ["Read these intervals with care: " + caveat]
    assert r.text[1] == r.warnings["metrics"][0]  # read right after the data sentence
    page = r.to_html()
    box = page.index('<div class="bv-warning" role="alert"><strong>Warning:</strong> Read these intervals')
    assert page.index('id="section-metrics"') < box < page.index('id="table-metrics"')
    md = r.to_markdown()
    assert "only 2 of the 30 vetted labels are positive" in md
    # spread scores and enough of each class: no box
    s = np.random.default_rng(1).beta(1, 3, 500)
    ok = _data(s, 40, 10)
    assert "metrics" not in be.report(be.Posterior.from_probabilities(ok, s, draws=50, random_seed=0,
                                                                      check=False), title="t").warnings


def test_no_vetted_label_is_a_caveat_of_the_data_its_summary_its_report_and_a_comparison():
    """docs/compare.md and docs/guide.md say the caveats cover a handful of vetted labels of a
    class, none included; with no vetted label at all, EvalData.caveats() and Comparison.caveats()
    were empty, and an interval from the prior alone came with no caveat beside it."""
    import warnings

    from bayeval.report import report

    s = np.random.default_rng(3).beta(1, 3, 300)
    d = _data(s, 0, 0)
    (caveat,) = d.caveats()
    assert caveat.startswith("no vetted labels:") and "bayeval.active.design" in caveat
    noisy = be.EvalData(s, np.full(300, np.nan), noisy_labels=(s > 0.5).astype(float))
    assert noisy.caveats()[0].startswith("no vetted labels: every interval rests on the noisy labels")
    post = be.Posterior.from_probabilities(d, s, draws=50, random_seed=0, check=False)
    assert post.summary().attrs["caveats"] == [caveat]
    r = report(post, title="t", metrics=["average_precision"])
    assert r.warnings["metrics"] == ["Read these intervals with care: " + caveat]
    assert r.text[1] == r.warnings["metrics"][0]  # read right after the data sentence ("0 are vetted")
    rng = np.random.default_rng(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cmp = be.compare({"a": rng.normal(size=300), "b": rng.normal(size=300)}, np.full(300, np.nan),
                         draws=50, chains=1, random_seed=0, model="logistic")
    (gap,) = cmp.caveats()
    assert gap.startswith("no vetted labels: every metric, gap and P(better) is the prior's")
    assert "bayeval vet CARD_A CARD_B" in gap and cmp.summary().attrs["caveats"] == [gap]
    r = report(cmp, title="t", metrics=["average_precision"])
    assert r.warnings["comparison"] == ["Read this comparison with care: " + gap]
    assert sum("no vetted labels" in line for line in r.text) == 1  # said once at the top (the data's)


def test_cli_prints_the_caveats(tmp_path, capsys):
    import pandas as pd

    from bayeval.cli import main

    rng = np.random.default_rng(5)
    s = rng.uniform(0.15, 0.48, 300)
    y = np.full(300, np.nan)
    y[:40] = 0
    y[:3] = 1
    path = tmp_path / "scores.csv"
    pd.DataFrame({"s": s, "y": y}).to_csv(path, index=False)
    assert main(["fit", str(path), "--score", "s", "--label", "y", "--draws", "100", "--tune", "100",
                 "--chains", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "caveat: only 3 of the 40 vetted labels are positive" in err
    assert "caveat: the probabilities are squeezed into" in err


def test_fit_warns_a_handful_of_vetted_positives_once_and_recalibrate_carries_the_caveats():
    """On the Python route nothing said that 1 vetted positive in 100 leaves the intervals to the prior:
    be.fit, summary and recalibrate raised no warning and print(rec) said nothing, while on a 10^4-item
    pool AP came out 0.92 [0.75, 1.0] against a true 0.669 and the threshold's recall 0.33 [0.24, 0.41]
    against 0.178. Only summary().attrs["caveats"] and the command line said it."""
    import warnings

    s = np.random.default_rng(3).beta(1, 3, 400)
    d = _data(s, 40, 1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        post = be.fit(d, random_seed=0, draws=200, progressbar=False)
    (said,) = d.caveats(post)
    assert said.startswith("only 1 of the 40 vetted labels are positive") and "can miss the truth" in said
    told = [str(x.message) for x in w if "vetted labels" in str(x.message)]
    assert told == ["bayeval: " + said]  # once, in the fitted model's words
    rec = be.recalibrate(post, min_precision=0.5)
    assert rec.caveats == (said,)
    assert str(rec).splitlines()[-1] == "caveat: " + said and str(rec).splitlines()[0] == rec.verdict
    assert repr(rec).endswith("; caveats (.caveats): only 1 of the 40 vetted labels are positive)")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        be.fit(d, random_seed=0, draws=200, progressbar=False, warn=False)
    assert not [x for x in w if "vetted labels" in str(x.message)]
    # enough of each class: nothing to say, anywhere
    ok = _data(s, 40, 10)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        post = be.fit(ok, random_seed=0, draws=200, progressbar=False)
    assert not [x for x in w if "vetted labels" in str(x.message)]
    rec = be.recalibrate(post, min_precision=0.5)
    assert rec.caveats == () and "caveat" not in str(rec) + repr(rec)


def test_compare_warns_a_handful_of_vetted_labels_once_in_its_own_words():
    """bayeval.fit warns a handful of vetted positives (or negatives) once; bayeval.compare said it only in
    Comparison.caveats(), never as a warning, so a Python user saw nothing (2 vetted positives of 30 on the
    breast-cancer scores of two classifiers: no warning). compare now warns it once, in the comparison's
    words (Comparison.caveats), pointing at the caller's line; not the stack's sentence about one score's
    calibration curve, and nothing with warn=False."""
    import warnings

    rng = np.random.default_rng(2)
    y = rng.random(600) < 0.1
    labels = np.full(600, np.nan)
    labels[:30] = 0
    labels[int(np.flatnonzero(y)[0])] = 1
    scores = {"a": 2 * y + rng.normal(0, 1, 600), "b": y + rng.normal(0, 1, 600)}

    def told(**kwargs):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            cmp = be.compare(scores, labels, random_seed=0, draws=100, **kwargs)
        return cmp, [x for x in w if "vetted labels" in str(x.message)]

    cmp, w = told()
    said = cmp.caveats()[0]
    assert said.startswith("only 1 of the 30 vetted labels are positive: which classifier"), said
    assert [str(x.message) for x in w] == ["bayeval: " + said]  # once, the comparison's sentence
    assert w[0].category is UserWarning and w[0].filename == __file__  # at the caller's line
    assert "calibration curve" not in str(w[0].message)  # not the stack's sentence about one score
    cmp, w = told(warn=False)
    assert w == [] and cmp.caveats()[0] == said  # said by caveats() only
    few_neg = np.where(np.arange(600) < 30, np.r_[np.ones(27), np.zeros(3)][np.arange(600) % 30], np.nan)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cmp = be.compare(scores, few_neg, random_seed=0, draws=100, model="logistic")  # one model: the same
    (msg,) = [str(x.message) for x in w if "vetted labels" in str(x.message)]
    assert msg == "bayeval: " + cmp.caveats()[0] and msg.startswith("bayeval: only 3 of the 30 vetted labels are "
                                                                     "negative: how many"), msg
    enough = np.where(np.arange(600) < 40, y, np.nan)
    enough[:10] = 1
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cmp = be.compare(scores, enough, random_seed=0, draws=100, model="logistic")
    assert not [x for x in w if "vetted labels" in str(x.message)]
    assert not [c for c in cmp.caveats() if "vetted labels" in c]


def test_cli_threshold_says_the_caveats_once_on_stderr(tmp_path, capsys):
    import pandas as pd

    from bayeval.cli import main

    s = np.random.default_rng(3).beta(1, 3, 400)
    y = np.full(400, np.nan)
    y[:40] = 0
    y[0] = 1
    path = tmp_path / "scores.csv"
    pd.DataFrame({"s": s, "y": y}).to_csv(path, index=False)
    assert main(["threshold", str(path), "--score", "s", "--label", "y", "--min-precision", "0.5", "--draws", "100",
                 "--tune", "100", "--chains", "1", "--no-progress"]) == 0
    out = capsys.readouterr()
    assert out.err.count("caveat: only 1 of the 40 vetted labels are positive") == 1
    assert "caveat" not in out.out  # the threshold's own lines: not the caveats again


def test_auto_reads_squeezed_probabilities_as_a_plain_score():
    """transform="auto": a curve reads squeezed probabilities (often not calibrated) on the
    standardized feature, other probabilities on the logit; an explicit transform is kept."""
    from bayeval.core.data import squeezed_range
    from bayeval.models import Calibration

    rng = np.random.default_rng(6)
    squeezed = _data(rng.uniform(0.15, 0.48, 400), 30, 10)
    spread = _data(rng.uniform(0.01, 0.99, 400), 30, 10)
    assert squeezed_range(squeezed.scores) is not None and squeezed_range(spread.scores) is None
    for curve in ("logistic", "monotone"):
        assert Calibration(curve).features(squeezed)[1]["scale"] == "standardize"
        assert Calibration(curve).features(spread)[1]["scale"] == "logit"
        assert Calibration(curve, transform="logit").features(squeezed)[1]["scale"] == "logit"
    # the caveat names the way back to the calibrated reading
    assert "transform='logit'" in squeezed.caveats()[0]
    # bayeval.fit's default fits both readings of squeezed probabilities, one of other ones
    from bayeval.models.stacking import default_candidates

    assert [(c.curve, c._scale(squeezed.scores)) for c in default_candidates(squeezed)] == [
        ("logistic", "logit"), ("monotone", "logit"), ("logistic", "standardize"), ("monotone", "standardize")]
    assert [c._scale(spread.scores) for c in default_candidates(spread)] == ["logit", "logit"]
    assert [c.transform for c in default_candidates(squeezed, "standardize")] == ["standardize"] * 2


def test_default_holds_on_squeezed_probabilities_calibrated_or_not():
    """The fast version of ``benchmarks/squeezed.py``: probabilities squeezed into [0.02, 0.26],
    once calibrated (a weak model) and once under-confident (a regularized one), 6 random sets
    of 30 labels each. One reading alone fails one of the pools (the standardized one covered
    8 of these 12 intervals on the calibrated pool, the calibrated one 0 of 12 on the other);
    the default, which weighs both by the labels, covered 12 and 11. A calibrated 90%
    interval covers at least 10 of 12 with probability 0.89."""
    from scipy import special

    from bayeval.core import metrics as M
    from bayeval.core.data import squeezed_range

    rng = np.random.default_rng(0)
    n = 2000
    s = special.expit(rng.normal(-2.4, 0.6, n))
    assert squeezed_range(s) is not None
    pools = {"calibrated": (rng.random(n) < s).astype(float),
             "under-confident": (rng.random(n) < special.expit(10 * (special.logit(s) + 1.6))).astype(float)}
    for name, y in pools.items():
        truth = {"precision": y[s >= 0.2].mean(), "ap": M.average_precision(y, s)}
        covered = 0
        for rep in range(6):
            idx = np.random.default_rng([1, rep]).choice(n, 30, replace=False)
            lab = np.full(n, np.nan)
            lab[idx] = y[idx]
            post = be.fit(be.EvalData(s, lab), random_seed=rep, progressbar=False, warn=False, draws=500)
            for metric, kw in (("precision", {"threshold": 0.2}), ("average_precision", {})):
                lo, hi = np.quantile(post.metric(metric, **kw).values, [0.05, 0.95])
                covered += bool(lo <= truth["ap" if metric == "average_precision" else metric] <= hi)
        assert covered >= 10, (name, covered)


def test_cli_passes_transform_to_the_default_model(tmp_path, capsys):
    import pandas as pd

    from bayeval.cli import main

    path = tmp_path / "s.csv"
    pd.DataFrame({"s": np.linspace(0, 1, 50), "y": [0.0, 1.0] * 5 + [np.nan] * 40}).to_csv(path, index=False)
    assert main(["fit", str(path), "--score", "s", "--label", "y", "--transform", "identity", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "--transform identity is a score mixture's map" in err and "standardize" in err


def test_a_contradicted_curve_is_the_labels_problem_in_the_check_the_report_and_the_cli(tmp_path, capsys):
    """A weighted curve the vetted labels contradict: the stack's check listed it among its
    messages with ok False, and the report then said "The sampler diagnostics are bad: the vetted
    labels contradict ... until a longer or better-tuned run fixes them" (more draws cannot fix
    what the labels say), beside its own calibration caveat; `bayeval fit` printed a class not
    vetted as "warning: sampler diagnostics are bad: ... no vetted negatives"."""
    import pandas as pd

    from bayeval.cli import main
    from bayeval.core._diagnostics import sampler_messages
    from bayeval.report import report

    s = np.random.default_rng(5).beta(2, 2, 300)
    post = be.fit(_data(s, 40, 15), random_seed=0, draws=200, warn=False)
    top = post.comparison.index[0]
    assert post.comparison.loc[top, "weight"] > 0.1
    post.comparison.loc[top, "flagged"] = True  # as the calibration check would mark it
    diag = post.check(warn=False)
    said = [m for m in diag["messages"] if m.startswith(f"the vetted labels contradict {top}")]
    assert said and said == [m for m in diag["data_messages"] if "contradict" in m] and not diag["ok"]
    assert not any("contradict" in m for m in sampler_messages(diag))
    text = " ".join(report(post, title="t").text)
    assert f"The vetted labels contradict {top}" in text  # the calibration section's caveat
    assert "sampler diagnostics are bad" not in text and "longer or better-tuned run" not in text
    assert "Sampler diagnostics look fine" in text and "about the vetted labels, not the sampler" in text

    path = tmp_path / "s.csv"
    y = np.full(60, np.nan)
    y[-12:] = 1.0  # every vetted label positive
    pd.DataFrame({"s": np.linspace(0, 1, 60), "y": y}).to_csv(path, index=False)
    assert main(["fit", str(path), "--score", "s", "--label", "y", "--draws", "200", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "no vetted negatives" in err and "sampler diagnostics are bad: no vetted" not in err
    assert "sampler diagnostics are bad" not in err or "r_hat" in err or "ESS" in err


def test_a_report_with_no_vetted_negative_reads_it_as_the_labels_problem_not_the_samplers():
    """Every vetted label positive: the report said "The sampler diagnostics are bad: ... no vetted
    negatives ... until a longer or better-tuned run fixes them" and gave no data caveat; a longer
    run fixes nothing there, vetting negatives does."""
    from bayeval.report import report

    s = np.random.default_rng(4).beta(2, 2, 300)
    d = _data(s, 20, 20)
    post = be.fit(d, random_seed=0, draws=200, warn=False)
    r = report(post, title="t")
    text = " ".join(r.text)
    assert "none of the 20 vetted labels is negative" in text and "Vet items from the middle and bottom" in text
    assert "sampler diagnostics are bad" not in text and "longer or better-tuned run" not in text
    assert any("no vetted negatives" in m for m in r.warnings["diagnostics"])  # the box keeps the check's words


def test_a_category_with_too_few_vetted_of_a_class_is_named_though_the_pool_has_plenty():
    """25 vetted positives in the pool, none in category b: no caveat said so, and b's metric
    (or a comparison's gap there) rested on the prior without a word."""
    rng = np.random.default_rng(0)
    n = 600
    cats = np.repeat(["a", "b", "c"], n // 3)
    y = np.full(n, np.nan)
    y[:40] = rng.random(40) < 0.6  # category a: about 24 positives and 16 negatives
    y[200:230] = 0  # category b: 30 vetted, all negative
    y[400:430] = np.arange(30) < 3  # category c: 3 positives
    d = be.EvalData(rng.random(n), y, categories=cats)
    said = [c for c in d.caveats() if c.startswith("fewer than 5 vetted positives")]
    assert len(said) == 1 and "in 2 of 3 categories (b with 0, c with 3)" in said[0]
    assert not any("negatives in" in c for c in d.caveats())  # every category has 5+ negatives
    assert be.EvalData(rng.random(n), y).caveats() == []  # no categories: the pool's counts are fine
    cmp = be.compare({"x": rng.random(n), "z": rng.random(n)}, d, random_seed=0, draws=50)
    gap = [c for c in cmp.caveats() if c.startswith("fewer than 5 vetted positives")]
    assert len(gap) == 1 and "there the gap rests largely on the prior" in gap[0]


def _tags_with_one_vetted_positive():
    """240 tagged items in 3 categories; 8 vetted at random in tag0 and in tag1 (1 positive among
    the 16), none in tag2."""
    from bayeval.models.label_flip import simulate_tags

    data, truth = simulate_tags(3, items_per_category=80, size_tail=0, random_seed=0)
    cats = np.asarray(data.category_names)[np.asarray(data.category_codes)]
    rng = np.random.default_rng(0)
    vet = np.concatenate([rng.choice(np.flatnonzero(cats == c), 8, replace=False) for c in ("tag0", "tag1")])
    y = np.full(data.n_items, np.nan)
    y[vet] = truth[vet]
    return be.EvalData(data.scores, y, noisy_labels=np.asarray(data.noisy_labels), categories=cats)


def test_a_label_flip_fit_says_its_own_prior_and_names_the_category_with_no_vetted_item(tmp_path, capsys):
    """With 1 of 16 vetted labels positive, a label-flip fit's caveat said "the prior takes the
    probabilities as calibrated" (the default model's prior; the label-flip model standardizes the
    scores and reads the noisy labels), in its summary, its report and `bayeval fit`; and tag2, with no
    vetted item, went unnamed because the categories were looked at only when the pool had enough."""
    import pandas as pd

    from bayeval.cli import main
    from bayeval.models import LabelFlip, ScoreMixture
    from bayeval.report import report
    from bayeval.vet import metric_readout

    d = _tags_with_one_vetted_positive()
    assert d.n_vetted == 16 and d.n_vetted_positive == 1
    unvetted = "no vetted item in 1 of 3 categories (tag2)"
    default = d.caveats()  # no model given: the default model's sentence, which says so
    assert default[0].startswith("only 1 of the 16 vetted labels are positive")
    assert "the default model's prior takes the probabilities as calibrated" in default[0]
    assert [c for c in default if c.startswith(unvetted)] and "noisy labels" in default[1]
    flip = d.caveats(LabelFlip())
    assert flip[0].startswith("only 1 of the 16 vetted labels are positive")
    assert "label-flip model's prior" in flip[0] and "does not take the scores as calibrated" in flip[0]
    assert "takes the probabilities as calibrated" not in flip[0] and "Vet items from the top" in flip[0]
    assert flip[1].startswith(unvetted) and flip[1:] == default[1:]
    mixture = d.caveats(ScoreMixture())[0]
    assert "score mixture's prior" in mixture and "takes the probabilities as calibrated" not in mixture
    # without categories the pool's sentence alone; with enough of each class in the pool, few_by_category's
    plain = be.EvalData(d.scores, d.labels)
    assert len(plain.caveats()) == 1

    post = LabelFlip().fit(d, draws=100, tune=100, chains=1, random_seed=0, progressbar=False, warn=False)
    assert post.summary(["average_precision"]).attrs["caveats"][:2] == flip
    assert ["Read these intervals with care: " + c for c in flip] == report(post, title="t").warnings["metrics"][:2]
    table = pd.DataFrame({"mean": [0.5], "sd": [0.1], "90% HDI lower": [0.3], "90% HDI upper": [0.7]},
                         index=["average_precision"])
    from types import SimpleNamespace

    page = metric_readout(SimpleNamespace(hdi_prob=0.9, data=d, model=LabelFlip()), table)
    assert page["caveats"] == flip

    path = tmp_path / "tags.csv"
    pd.DataFrame({"s": d.scores, "y": d.labels, "tag": d.noisy_labels, "cat": d.categories}).to_csv(path, index=False)
    capsys.readouterr()
    assert main(["fit", str(path), "--score", "s", "--label", "y", "--noisy-label", "tag", "--category", "cat",
                 "--draws", "100", "--tune", "100", "--chains", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "Fitting label_flip" in err and f"caveat: {flip[0]}" in err and f"caveat: {unvetted}" in err
    assert "takes the probabilities as calibrated" not in err


def test_a_standardized_stack_and_a_stack_with_a_label_flip_candidate_say_their_own_prior(tmp_path, capsys):
    """With 4 of 30 vetted labels positive, a `Stack(transform="standardize")` fit (and `bayeval fit
    --transform standardize`) and a stack with a LabelFlip candidate said "the default model's prior
    takes the probabilities as calibrated": the first reads them standardized, and part of the second's
    draws come from the label-flip model, which reads the noisy labels."""
    from bayeval.cli import main
    from bayeval.models import Calibration, LabelFlip, Stack

    rng = np.random.default_rng(0)
    q = rng.beta(0.5, 4, 300)
    truth = (rng.random(300) < q).astype(int)
    y = np.full(300, np.nan)
    y[:30] = truth[:30]
    d = be.EvalData(q, y, noisy_labels=np.where(rng.random(300) < 0.85, truth, 1 - truth))
    assert d.n_vetted_positive == 4
    calibrated = "takes the probabilities as calibrated"
    assert calibrated in d.caveats()[0] and d.caveats(Stack()) == d.caveats()  # the default: as before
    fit = dict(draws=100, tune=100, chains=1, random_seed=0, progressbar=False, warn=False)

    std = d.caveats(Stack(transform="standardize"))[0]
    assert std.startswith("only 4 of the 30 vetted labels are positive")
    assert "reads them standardized (transform='standardize')" in std and calibrated not in std
    assert "Vet items from the top" in std
    post = Stack(transform="standardize").fit(d, **fit)
    assert post.summary(["average_precision"]).attrs["caveats"][0] == std
    path = tmp_path / "p.csv"
    path.write_text("s,y\n" + "".join(f"{float(a)!r},{'' if np.isnan(b) else int(b)}\n" for a, b in zip(q, y, strict=True)))
    assert main(["fit", str(path), "--score", "s", "--label", "y", "--transform", "standardize", "--draws", "100",
                 "--tune", "100", "--chains", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"caveat: {std}" in err and calibrated not in err

    flip_said = d.caveats(LabelFlip())[0].split(": ", 1)[1].removesuffix(
        " Vet items from the top of the ranking next (bayeval.active.design or bayeval.select, or `bayeval select`) "
        "rather than more random ones.")
    mixed = d.caveats(Stack([Calibration("logistic"), LabelFlip()]))[0]
    assert "the stack's candidates read so few through priors of their own" in mixed
    assert "calibration/logistic: The share of positives" in mixed and flip_said[1:] in mixed
    post = Stack([Calibration("logistic"), LabelFlip()]).fit(d, **fit)
    w = post.weights
    assert (w > 0).all()  # both carry draws on this seed
    said = post.summary(["average_precision"]).attrs["caveats"][0]
    assert f"calibration/logistic ({w['calibration/logistic']:.0%} of the draws): The share" in said
    assert "label-flip model's prior" in said and flip_said[1:] in said


def _reversed_pool(n_vet=40, seed=0):
    """Scores that rank positives low (as the other class's probability would): P(y = 1 | s) = (1 - s)^2."""
    rng = np.random.default_rng(seed)
    s = rng.random(500)
    z = (rng.random(500) < (1 - s) ** 2).astype(float)
    lab = np.full(500, np.nan)
    v = rng.choice(500, n_vet, replace=False)
    lab[v] = z[v]
    return s, z, lab


def test_scores_that_rank_the_vetted_positives_low_are_a_caveat_and_rarely_a_false_alarm():
    """predict_proba[:, 0] or a distance: every model here takes a higher score as more likely positive,
    so the fit went flat near the base rate and gave AP 0.347 [0.226, 0.472] around a true 0.171 with no
    caveat and post.check()['ok'] True."""
    from bayeval.core.data import REVERSED_LEVEL, reversed_scores

    s, _, lab = _reversed_pool()
    d = be.EvalData(s, lab)
    auc, p = reversed_scores(d)
    assert auc < 0.2 and p < REVERSED_LEVEL
    c = d.caveats()
    assert c[0].startswith("higher scores look less likely positive: the 12 vetted positives mostly score below")
    assert "use 1 - p" in c[0] and "negate it" in c[0] and "positives rise with the score" in c[0]
    # the same labels on the scores turned round: nothing to say
    assert reversed_scores(be.EvalData(1 - s, lab)) is None and be.EvalData(1 - s, lab).caveats() == []
    # correctly oriented scores of a weak classifier (binormal, ROC AUC 0.6), 20 to 100 random labels:
    # measured at most 0.28% of label sets per cell (benchmarks/results/reversed_scores.md); 5 of 1,000 here
    # would be a rate of about 0.5% or more
    rng = np.random.default_rng(7)
    fired = 0
    for _ in range(1000):
        n = int(rng.integers(20, 101))
        y = (rng.random(n) < rng.choice([0.1, 0.3, 0.5])).astype(float)
        x = 1 / (1 + np.exp(-(rng.normal(size=n) + 0.358 * y - 1)))
        fired += reversed_scores(be.EvalData(x, y)) is not None
    assert fired <= 4
    # no vetted positive, or no vetted label: no test
    assert reversed_scores(_data(s, 30, 0)) is None and reversed_scores(_data(s, 0, 0)) is None


def test_fit_warns_and_summary_check_and_report_say_the_scores_look_reversed():
    import warnings

    from bayeval.models import Calibration
    from bayeval.report import report

    s, _, lab = _reversed_pool()
    d = be.EvalData(s, lab)
    (said,) = [c for c in d.caveats() if c.startswith("higher scores look less likely positive")]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        post = be.fit(d, random_seed=0, draws=200, progressbar=False)
    assert any(said in str(x.message) for x in w)
    assert post.summary(["average_precision"]).attrs["caveats"][0] == said
    diag = post.check(warn=False)
    assert not diag["ok"] and diag["messages"][0] == said and diag["data_messages"][0] == said
    assert sum(said in m for m in diag["messages"]) == 1  # once, not again per candidate
    r = report(post, title="t", metrics=["average_precision"])
    assert "Read these intervals with care: " + said in r.warnings["metrics"]
    one = Calibration("logistic").fit(d, draws=200, chains=1, random_seed=0, progressbar=False, warn=False)
    assert one.check(warn=False)["data_messages"][0] == said
    # turned round, the same labels fit without the finding
    assert be.fit(be.EvalData(1 - s, lab), random_seed=0, draws=200, progressbar=False,
                  warn=False).check(warn=False)["messages"] == []


def test_compare_names_the_classifier_whose_scores_rank_the_vetted_positives_low():
    """compare() of a classifier's predict_proba[:, 0] beside another's [:, 1] printed a confident gap with
    no word (Comparison.caveats() []); where the turned-round one came first by name, the stack's check said
    the single-score sentence without naming it."""
    import warnings

    s, _, lab = _reversed_pool()
    scores = {"b_right": 1 - s, "a_turned": s}  # a_turned is the fit's first column (sorted by name)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        cmp = be.compare(scores, lab, random_seed=0, draws=200)
    said = cmp.caveats()[0] if cmp.caveats() else ""
    assert said.startswith("a_turned's higher scores look less likely positive: a_turned scores the 12 vetted "
                           "positives mostly below the 28 vetted negatives")
    assert "use 1 - p" in said and "negate it" in said and "Fix a_turned's scores and compare again." in said
    assert cmp.caveats()[0] == said and cmp.summary().attrs["caveats"][0] == said
    assert sum("look less likely positive" in c for c in cmp.caveats()) == 1  # b_right is not named
    told = [str(x.message) for x in w if "look less likely positive" in str(x.message)]
    assert len(told) == 1 and said in told[0]  # named, once: not the single-score sentence of column 0
    diag = cmp.posterior.check(warn=False)
    assert not diag["ok"] and diag["messages"][0] == said and diag["data_messages"][0] == said
    assert sum("look less likely positive" in m for m in diag["messages"]) == 1
    # the joint posterior's own data caveats name it too (the report's metrics section reads them)
    assert cmp.posterior.data.caveats(cmp.posterior)[0] == said
    from bayeval.models.joint import joint_data, reversed_classifiers

    assert reversed_classifiers(joint_data(scores, lab)) == [said]
    # both oriented as they should be: nothing to say; both turned round: each named, in the order given
    assert reversed_classifiers(joint_data({"x": 1 - s, "y": (1 - s) ** 2}, lab)) == []
    both = reversed_classifiers(joint_data({"y": s ** 2, "x": s}, lab))
    assert [c.split("'")[0] for c in both] == ["y", "x"]


@pytest.mark.parametrize("which", ["score_mixture", "label_flip"])
def test_score_mixture_and_label_flip_checks_say_the_scores_look_reversed(which):
    """Their check() was ok with no message on predict_proba[:, 0]-like scores (the summary's caveats said
    it; the fit did not warn): on the breast-cancer example ScoreMixture gave AP 0.61 [0.50, 0.73] and
    ROC AUC 0.74 [0.69, 0.79] around a true 0.43 and 0.007."""
    import warnings

    from bayeval.models import LabelFlip, ScoreMixture

    s, z, lab = _reversed_pool()
    if which == "label_flip":
        noisy = (np.random.default_rng(3).random(s.size) < np.where(z == 1, 0.6, 0.05)).astype(float)
        d, model = be.EvalData(s, lab, noisy_labels=noisy), LabelFlip()
    else:
        d, model = be.EvalData(s, lab), ScoreMixture()
    said = d.caveats(model)[0]
    assert said.startswith("higher scores look less likely positive: the 12 vetted positives mostly score below")
    # the label-flip model's slope can turn negative: its sentence says what it makes of such scores
    assert ("slope turn negative" in said) == (which == "label_flip")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        post = model.fit(d, random_seed=0, draws=200, chains=1, progressbar=False)
    assert any(said in str(x.message) for x in w)
    diag = post.check(warn=False)
    assert not diag["ok"] and diag["messages"][0] == said and diag["data_messages"] == [said]
    assert post.summary(["average_precision"]).attrs["caveats"][0] == said
    # the same labels on the scores turned round: no finding
    fixed = be.EvalData(1 - s, lab, noisy_labels=d.noisy_labels)
    assert not any("less likely positive" in c for c in fixed.caveats(model))
    again = model.fit(fixed, random_seed=0, draws=200, chains=1, progressbar=False, warn=False)
    assert not any("less likely positive" in m for m in again.check(warn=False)["messages"])


def test_the_command_line_says_reversed_scores_once(tmp_path, capsys):
    """`bayeval fit` printed the finding twice, as a `warning:` line (the fit's check) and again as a
    `caveat:` line (the data's caveats), word for word."""
    import pandas as pd

    from bayeval.cli import main

    s, _, lab = _reversed_pool()
    path = tmp_path / "scores.csv"
    pd.DataFrame({"s": s, "y": lab}).to_csv(path, index=False)
    assert main(["fit", str(path), "--score", "s", "--label", "y", "--draws", "100", "--tune", "100",
                 "--chains", "1", "--no-progress"]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "higher scores look less likely positive" in line]
    assert len(lines) == 1 and lines[0].startswith(("warning: ", "caveat: ")), err


def test_a_stack_of_a_calibration_curve_and_the_label_flip_model_says_reversed_scores_once():
    """Each candidate's sentence on scores that rank the vetted positives low was said in full, the finding
    twice over (the two differ only in their last words: what each model makes of such scores), in the fit's
    warning, its check and the summary's caveats."""
    import warnings

    from bayeval.models import Calibration, LabelFlip, Stack

    s, z, lab = _reversed_pool()
    noisy = (np.random.default_rng(3).random(s.size) < np.where(z == 1, 0.6, 0.05)).astype(float)
    d = be.EvalData(s, lab, noisy_labels=noisy)
    cands = [Calibration("logistic"), LabelFlip()]
    (said,) = d.caveats(Stack(cands))[:1]
    assert sum("look less likely positive" in c for c in d.caveats(Stack(cands))) == 1
    # the finding once, then each candidate's reading, named
    assert said.startswith("higher scores look less likely positive: the 12 vetted positives mostly score below")
    assert said.count("use 1 - p") == 1 and "calibration/logistic" in said and "LabelFlip(" in said
    assert "positives rise with the score" in said and "slope turn negative" in said
    # candidates that read it alike: their one sentence, as before
    alike = Stack([Calibration("logistic"), Calibration("monotone")])
    assert d.caveats(alike)[0] == d.caveats(Calibration())[0]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        post = be.fit(d, candidates=cands, random_seed=0, draws=200, chains=1, progressbar=False)
    told = " ".join(str(x.message) for x in w)
    assert told.count("look less likely positive") == 1
    diag = post.check(warn=False)
    assert sum("look less likely positive" in m for m in diag["messages"]) == 1
    assert sum("look less likely positive" in m for m in diag["data_messages"]) == 1
    caveats = post.summary(["average_precision"]).attrs["caveats"]
    assert sum("look less likely positive" in c for c in caveats) == 1


def _few_positives_card(folder, *, n=300, seed=5):
    """A card on squeezed probabilities with 3 vetted positives among 40, and a recall at a
    threshold above every score: three caveats of the report."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    y = np.full(n, np.nan)
    y[:40] = 0
    y[:3] = 1
    folder.mkdir()
    pd.DataFrame({"s": rng.uniform(0.15, 0.48, n), "y": y}).to_csv(folder / "scores.csv", index=False)
    (folder / "card.toml").write_text(
        'title = "toy"\ndescription = "d"\ndata = { file = "scores.csv", score = "s", label = "y" }\n'
        'model = { name = "calibration" }\nsampling = { draws = 100, tune = 100, chains = 1, random_seed = 1 }\n'
        '[report]\nmetrics = ["average_precision", { name = "recall", threshold = 0.9 }]\n')
    return folder


def test_cli_report_says_the_report_caveats_on_stderr_as_fit_does(tmp_path, capsys):
    """docs/guide.md: "`bayeval fit`, `threshold` and `report` print them". `bayeval report` printed
    only its progress lines, the caveats (3 vetted positives, squeezed probabilities) only inside
    report.md/html, while its terminal table showed the intervals they qualify."""
    from bayeval.cli import main

    card = _few_positives_card(tmp_path / "toy")
    assert main(["fit", str(card / "scores.csv"), "--score", "s", "--label", "y", "--draws", "100", "--tune", "100",
                 "--chains", "1", "--no-progress"]) == 0
    fit = [line for line in capsys.readouterr().err.splitlines() if line.startswith("caveat: ")]
    assert len(fit) == 2 and fit[0].startswith("caveat: only 3 of the 40 vetted labels are positive")
    for quiet in ("--no-progress", "--quiet"):  # not a progress message: said under --quiet too
        assert main(["report", str(card), "--out", str(tmp_path / "rep"), quiet]) == 0
        out = capsys.readouterr()
        said = [line for line in out.err.splitlines() if line.startswith("caveat: ")]
        assert said[:2] == fit  # the data's, in fit's words, each once
        assert len(said) == 3 and "threshold 0.9 flags no item" in said[2]  # the report's own: its threshold
        assert ("report: metric table" in out.err) is (quiet == "--no-progress")
        assert "caveat" not in out.out
    md = (tmp_path / "rep" / "report.md").read_text()
    assert all(line.removeprefix("caveat: ") in md for line in said)  # the report's caveats, not others
    other = _few_positives_card(tmp_path / "other", seed=6)  # several cards: each line names its card
    assert main(["report", str(card), str(other), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("caveat: toy: only 3 of the 40") == 1 and err.count("caveat: other: only 3 of the 40") == 1


def test_report_caveats_are_the_boxes_say_caveats_does_not_say_itself():
    import pandas as pd

    from bayeval._cli_warnings import report_caveats
    from bayeval.report import Report

    table = pd.DataFrame({"mean": [0.5]}, index=["recall"])
    table.attrs["reported"] = ["a threshold above every score"]
    rep = Report("t", tables={"metrics": table}, warnings={
        "metrics": ["Read these intervals with care: few positives"], "diagnostics": ["r_hat 1.2"],
        "calibration": ["The vetted labels contradict logit"], "constraints": ["no threshold meets it"]})
    assert report_caveats(rep) == ["a threshold above every score", "The vetted labels contradict logit",
                                   "no threshold meets it"]
