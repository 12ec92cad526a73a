"""Model-card report: tables against the library's own functions, escaping,
determinism, constraint probabilities, the score-mixture section, bad inputs, and the
rendered page in a headless browser."""

import base64
import os
import re
import shutil
import tempfile
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

from bayeval import EvalData, Posterior, naive, recalibrate, vetted_only
from bayeval.core import metrics
from bayeval.report import Report, report

matplotlib.use("Agg")

NASTY = '<script>alert(1)</script> & "x"'
NASTY_ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"
CATS = ["cat", "dog", "<b>x</b>"]


def toy(n=150, n_vetted=25, seed=0, categories=False, noisy=False, draws=200):
    """Calibrated scores (truth ~ Bernoulli(score)), a random vetted subset, and the
    posterior that draws unvetted labels from the scores themselves."""
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    truth = (rng.random(n) < s).astype(int)
    y = np.full(n, np.nan)
    idx = rng.choice(n, n_vetted, replace=False)
    y[idx] = truth[idx]
    kw = {}
    if categories:
        kw["categories"] = rng.choice(CATS, n)
    if noisy:
        kw["noisy_labels"] = np.where(rng.random(n) < 0.85, truth, 1 - truth)
    data = EvalData(s, y, **kw)
    return Posterior.from_probabilities(data, s, draws=draws, random_seed=seed), truth


def _page_without_figures(r):
    """The HTML of a report's text, tables and warnings (rendering PNGs is the slow part)."""
    return Report(
        r.title, tables=r.tables, text=r.text, warnings=r.warnings, notes=r.notes
    ).to_html()


@pytest.fixture(scope="module")
def plain():
    return toy()


@pytest.fixture(scope="module")
def plain_report(plain):
    post, truth = plain
    return report(
        post,
        title="Toy classifier",
        constraints={"min_precision": 0.75, "min_recall": 0.5},
        truth=truth,
    )


@pytest.fixture(scope="module")
def rich():
    return toy(categories=True, noisy=True, seed=1)


# ----------------------------------------------------------------- structure


def test_tables_without_categories_match_the_library(plain, plain_report):
    post, truth = plain
    r = plain_report
    assert set(r.tables) == {"data", "metrics", "constraints", "at_threshold"}
    assert set(r.figures) == {"pr_curve", "threshold_probability"}
    pd.testing.assert_frame_equal(r.tables["data"], post.data.counts())
    t = r.tables["metrics"]
    assert t.columns.tolist() == ["mean", "sd", "90% HDI lower", "90% HDI upper", "vetted_only",
                                  "vetted_only_n", "truth"]
    rec = recalibrate(post, min_precision=0.75, min_recall=0.5)
    thr = rec.threshold_text  # the decimal that flags the same items as the threshold
    assert np.sum(post.data.scores >= float(thr)) == rec.flagged
    assert t.index.tolist() == [
        "average precision",
        "ROC AUC",
        "precision@10",
        "precision@50",
        "precision@100",
        f"precision at t={thr}",
        f"recall at t={thr}",
        f"F1 at t={thr}",
    ]
    # the posterior columns are Posterior.summary's numbers (same seeded draws)
    ref = post.summary(
        {"average precision": "average_precision", "precision@50": ("precision_at_k", {"k": 50})},
        hdi_prob=0.9,
    )
    ref.columns = ["mean", "sd", "90% HDI lower", "90% HDI upper"]  # plain headers in the report
    pd.testing.assert_frame_equal(t.loc[ref.index, ref.columns], ref)
    assert t.loc["average precision", "vetted_only"] == float(
        vetted_only(post.data, "average_precision")
    )
    assert t.loc["average precision", "truth"] == pytest.approx(
        metrics.average_precision(truth, post.data.scores)
    )
    assert t.loc["precision@10", "truth"] == pytest.approx(
        metrics.precision_at_k(truth, post.data.scores, k=10)
    )
    # 25 vetted items: P@50 and P@100 are undefined vetted-only
    assert np.isnan(t.loc["precision@50", "vetted_only"]) and np.isnan(
        t.loc["precision@100", "vetted_only"]
    )
    f1 = post.summary(["f_score"], hdi_prob=0.9, threshold=rec.threshold)
    assert t.loc[f"F1 at t={thr}", "mean"] == f1["mean"].iloc[0]
    assert "naive" not in t.columns
    assert any("naive: not shown" in m for m in r.notes["metrics"])
    # no sampler behind given probabilities: no diagnostics table, and it says why
    assert "diagnostics" not in r.tables and any("No sampler" in m for m in r.notes["diagnostics"])


def test_categories_naive_and_per_category_table(rich):
    post, truth = rich
    r = report(post, title="Tagger", truth=truth)
    # the PR curve is pooled over the categories, and its title says so
    assert r.figures["pr_curve"].axes[0].get_title().endswith("; all categories pooled)")
    t = r.tables["metrics"]
    assert "naive" in t.columns and "mean average precision over categories" in t.index
    assert t.loc["average precision", "naive"] == float(
        naive(post.data, "average_precision", category="pooled")
    )
    assert t.loc["mean average precision over categories", "mean"] == pytest.approx(
        float(post.metric("average_precision", category="mean").mean())
    )
    by = r.tables["metrics_by_category"]
    names = sorted(CATS)
    assert by.index.tolist() == [
        f"{m}[category={c}]" for m in ("average precision", "ROC AUC") for c in names
    ]
    per_cat = vetted_only(post.data, "average_precision", category="each")
    np.testing.assert_array_equal(by["vetted_only"].iloc[:3].to_numpy(), per_cat.values)
    assert r.tables["data"].index.tolist() == [*names, "total"]
    page = r.to_html()
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page


def test_user_metrics_dict_pooled_and_by_category(rich):
    post, _ = rich
    r = report(
        post,
        title="t",
        metrics={"AP <i>": "average_precision", "P@5": ("precision_at_k", {"k": 5})},
    )
    assert r.tables["metrics"].index.tolist() == ["AP <i>", "P@5"]
    assert len(r.tables["metrics_by_category"]) == 2 * len(CATS)
    page = r.to_html()
    assert "AP &lt;i&gt;" in page and "AP <i>" not in page


# ------------------------------------------------------------------ escaping


def test_user_strings_are_escaped_everywhere(plain):
    post, _ = plain
    r = report(
        post,
        title=NASTY,
        description=f"first {NASTY}\n\nsecond",
        metrics={NASTY: "average_precision"},
    )
    page = r.to_html()
    assert "<script" not in page.lower() and "alert(1)</" not in page
    assert f"<title>{NASTY_ESCAPED}</title>" in page
    assert page.count(NASTY_ESCAPED) >= 4  # title tag, h1, description, table row, reading
    md = r.to_markdown("figs")
    # Markdown: & < > escaped (no raw HTML), quotes left readable
    assert "<script" not in md and '&lt;script&gt;alert(1)&lt;/script&gt; &amp; "x"' in md
    assert "&quot;" not in md and "&#x27;" not in md
    frag = r._repr_html_()
    assert "<html" not in frag and NASTY_ESCAPED in frag and "<script" not in frag
    # a table cell with "|" does not break the Markdown table
    md2 = Report("t", tables={"x": pd.DataFrame({"a|b": [1]}, index=["r|1"])}).to_markdown()
    assert "a\\|b" in md2 and "r\\|1" in md2


# --------------------------------------------------------------- determinism


def test_same_inputs_give_identical_tables_html_and_files(plain, tmp_path):
    post, truth = plain
    kw = dict(title="Toy", constraints={"min_precision": 0.75}, truth=truth)
    a, b = report(post, **kw), report(post, **kw)
    assert a.tables.keys() == b.tables.keys()
    for name in a.tables:
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name])
    assert a.text == b.text
    pa, pb = a.save(tmp_path / "a"), b.save(tmp_path / "b")
    assert pa.keys() == pb.keys()
    for key in pa:  # report.html (with the embedded PNGs), report.md, figures/*.png
        assert pa[key].read_bytes() == pb[key].read_bytes(), key
    # the PNGs carry no matplotlib version (metadata is fixed)
    assert b"matplotlib" not in pa["figures/pr_curve.png"].read_bytes()
    # ... and the comparison can fail: another seed gives other numbers
    other = Posterior.from_probabilities(
        post.data, post.data.scores, draws=post.n_draws, random_seed=99
    )
    c = report(other, **kw)
    assert not np.array_equal(
        c.tables["metrics"]["mean"].to_numpy(), a.tables["metrics"]["mean"].to_numpy()
    )


def test_no_matplotlib_state_leaks(plain):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    r = report(plain[0], title="t", constraints={"min_recall": 0.5})
    assert plt.get_fignums() == before
    assert len(r.figures) == 2


# --------------------------------------------------------------- constraints


@pytest.mark.parametrize(
    "cons",
    [{"min_precision": 0.75, "min_recall": 0.5}, {"min_precision": 0.8}, {"min_recall": 0.6}],
)
def test_constraint_probabilities_equal_recalibrate(plain, cons):
    post, _ = plain
    thresholds = np.linspace(0.05, 0.95, 37)
    r = report(post, title="t", constraints=cons, thresholds=thresholds)
    rec = recalibrate(post, thresholds=thresholds, **cons)
    c = r.tables["constraints"]
    assert (c["threshold"] == rec.threshold).all()
    expect = {}
    if "min_precision" in cons:
        single = recalibrate(post, min_precision=cons["min_precision"], thresholds=thresholds)
        expect[f"precision >= {cons['min_precision']:g}"] = float(
            single.probability.sel(threshold=rec.threshold)
        )
    if "min_recall" in cons:
        single = recalibrate(post, min_recall=cons["min_recall"], thresholds=thresholds)
        expect[f"recall >= {cons['min_recall']:g}"] = float(
            single.probability.sel(threshold=rec.threshold)
        )
    if len(cons) == 2:
        expect["both"] = rec.probability_at_threshold
    assert c["probability"].to_dict() == expect
    at = r.tables["at_threshold"]
    ref = post.summary(["precision", "recall", "f_score"], hdi_prob=0.9, threshold=rec.threshold)
    np.testing.assert_array_equal(at["mean"].to_numpy(), ref["mean"].to_numpy())
    assert any(f"Threshold {rec.threshold:.4g} meets" in s for s in r.text)


def test_impossible_constraint_is_flagged(plain):
    r = report(plain[0], title="t", constraints={"min_precision": 1.0, "min_recall": 1.0})
    assert r.tables["constraints"].loc["both", "probability"] < 0.5
    assert r.warnings["constraints"] and 'role="alert"' in _page_without_figures(r)


def test_a_floor_no_draw_meets_is_said_plainly_not_as_met_with_probability_zero():
    from bayeval.report import _constraint_sentences

    table = pd.DataFrame({"threshold": [1.0], "probability": [0.0], "required probability": [np.nan],
                          "flagged items": [500], "fewest allowed": [18], "items": [1760]},
                         index=pd.Index(["precision >= 0.6"], name="constraint"))
    sentences, problem = _constraint_sentences(table, 400)
    # before: "Threshold 1 meets precision ≥ 0.6 with probability 0.00, the most probable ..."
    assert sentences == [problem] and "meets precision" not in problem
    assert problem.startswith("No posterior draw meets the constraint at any candidate threshold that flags "
                              "at least 18 items (0 of 400 draws") and "t = 1" in problem
    table["probability"] = [0.3]  # reachable in some draws: the most-probable sentence, and the red box
    sentences, problem = _constraint_sentences(table, 400)
    assert sentences[0].startswith("Threshold 1 meets precision ≥ 0.6 with probability 0.30")
    assert problem.startswith("No candidate threshold meets the constraint with probability above one half")


# ----------------------------------------------------------------- the reading


def test_reading_mentions_wide_intervals_and_truth():
    # 3 vetted items out of 60 with uninformative probabilities: AP is very uncertain
    data = EvalData(np.linspace(0, 1, 60), np.r_[[0, 1, 1], np.full(57, np.nan)])
    post = Posterior.from_probabilities(data, np.full(60, 0.5), draws=300, random_seed=0)
    truth = np.r_[[0, 1, 1], np.zeros(57)]
    r = report(post, title="t", truth=truth, metrics={"average precision": "average_precision"})
    lo, hi = r.tables["metrics"].iloc[0, 2:4]
    assert hi - lo >= 0.2
    line = next(s for s in r.text if s.startswith("With 90% probability the average precision"))
    assert "wide" in line and f"{lo:.3f} and {hi:.3f}" in line and "from 3 vetted items" in line
    inside = lo <= r.tables["metrics"].loc["average precision", "truth"] <= hi
    assert ("(inside the interval)" if inside else "(OUTSIDE the interval)") in line
    # a narrow interval is not called wide
    sure = Posterior.from_probabilities(
        data, (np.linspace(0, 1, 60) > 0.5).astype(float), draws=300, random_seed=0
    )
    r2 = report(sure, title="t", metrics={"average precision": "average_precision"})
    # the data's caveats (2 positives and 1 negative vetted) say what so few labels do to an
    # interval in general; no other sentence calls this narrow interval wide
    caveats = r2.warnings.get("metrics", [])
    assert len(caveats) == 2 and all(c.startswith("Read these intervals with care: only") for c in caveats)
    assert not any("wide" in s for s in r2.text if s not in caveats)


def test_session_like_object_adds_vetting_progress(plain):
    post, _ = plain

    class Session:
        posterior = post

        def history(self):
            return pd.DataFrame(
                {"n_vetted": [5, 10, 15], "ap_mean": [0.6, 0.7, 0.72], "ap_sd": [0.1, 0.06, 0.04]}
            )

    r = report(Session(), title="loop")
    assert r.tables["vetting_progress"]["n_vetted"].tolist() == [5, 10, 15]
    ax = r.figures["vetting_progress"].axes[0]
    assert ax.get_xlabel() == "n_vetted" and len(ax.get_lines()) == 2


# ---------------------------------------------------------------- bad inputs


def test_bad_inputs_raise_clearly(plain):
    post, _ = plain
    with pytest.raises(TypeError, match="needs a bayeval Posterior"):
        report(np.zeros(3), title="t")
    with pytest.raises(TypeError, match="needs a bayeval Posterior"):
        report(type("S", (), {"posterior": 3})(), title="t")
    with pytest.raises(TypeError, match="constraints.*must be a dict"):
        report(post, title="t", constraints=0.9)
    with pytest.raises(ValueError, match="unknown key.*min_precision"):
        report(post, title="t", constraints={"precision": 0.9})
    with pytest.raises(ValueError, match="sets no bound"):
        report(post, title="t", constraints={})
    with pytest.raises(ValueError, match=r"min_recall.*\[0, 1\]"):
        report(post, title="t", constraints={"min_recall": 1.5})
    for bad in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="hdi_prob"):
            report(post, title="t", hdi_prob=bad)
    with pytest.raises(TypeError, match="hdi_prob"):
        report(post, title="t", hdi_prob="0.9")
    with pytest.raises(ValueError, match="title.*empty"):
        report(post, title="  ")
    with pytest.raises(TypeError, match="title"):
        report(post, title=None)
    with pytest.raises(ValueError, match="truth.*has 3 item"):
        report(post, title="t", truth=[0, 1, 1])
    with pytest.raises(ValueError, match="thresholds.*only applies"):
        report(post, title="t", thresholds=[0.5])
    with pytest.raises(ValueError, match="Unknown metric"):
        report(post, title="t", metrics=["nope"])
    with pytest.raises(TypeError, match="DataFrame"):
        Report("t", tables={"x": [1, 2]})


# --------------------------------------------------------------------- files


def test_save_writes_a_self_contained_page(plain_report, tmp_path):
    paths = plain_report.save(tmp_path / "out" / "deep")
    assert set(paths) == {
        "report.html",
        "report.md",
        "figures/pr_curve.png",
        "figures/threshold_probability.png",
    }
    assert all(p.is_file() for p in paths.values())
    page = paths["report.html"].read_text(encoding="utf-8")
    srcs = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert srcs and all(s.startswith("data:") for s in srcs)
    assert "<script" not in page and "http" not in re.sub(r'"data:[^"]*"', "", page)
    imgs = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert (
        len(imgs) == 2 and base64.b64decode(imgs[0]) == paths["figures/pr_curve.png"].read_bytes()
    )
    md = paths["report.md"].read_text(encoding="utf-8")
    for link in re.findall(r"\]\(([^)]+\.png)\)", md):
        assert (paths["report.md"].parent / link).is_file()
    assert "| average precision |" in md


# --------------------------------------------------------- the score mixture


@pytest.fixture(scope="module")
def spe():
    from bayeval.datasets import load_breast_cancer_scores
    from bayeval.models import ScoreMixture

    data = load_breast_cancer_scores()
    truth = load_breast_cancer_scores(as_frame=True)["true_label"].to_numpy()
    # the SPE paper's pair (as in `bayeval demo`); on this data the PPC rejects it
    post = ScoreMixture("gamma", "truncnormal").fit(
        data,
        draws=200,
        tune=300,
        chains=2,
        cores=1,
        sampler="pymc",
        random_seed=0,
        progressbar=False,
        warn=False,
    )
    return post, truth


@pytest.fixture(scope="module")
def spe_report(spe):
    post, truth = spe
    return report(
        post, title=NASTY, truth=truth, constraints={"min_precision": 0.95, "min_recall": 0.9}
    )


def test_score_mixture_section_and_warnings(spe, spe_report):
    post, _ = spe
    r = spe_report
    ppc = post.ppc()
    assert r.tables["fit"].loc["PPC p-value", "value"] == ppc["p_value"]
    se = r.tables["fit"].loc["PPC p-value, Monte Carlo error (±)", "value"]
    n_ppc = len(ppc["ks_draws"])
    assert se == pytest.approx(np.sqrt(max(ppc["p_value"], 1 / n_ppc) * (1 - max(ppc["p_value"], 1 / n_ppc)) / n_ppc))
    assert "mixture_fit" in r.figures and len(r.figures["mixture_fit"].axes) >= 2
    assert r.figures["mixture_fit"].axes[0].get_xlabel() == "score"  # the classifier's own scale
    assert "precision (predictions)" in r.tables["metrics"].index  # the data has predictions
    # PPC verdict and warning box follow the p-value and its Monte Carlo error
    from bayeval.report import _ppc_verdict

    verdict = _ppc_verdict(ppc["p_value"], len(ppc["ks_draws"]))
    rejects = verdict != "fine"
    assert bool(r.warnings.get("fit")) == rejects
    word = {"misfit": "rejects", "borderline": "borderline", "fine": "no evidence"}[verdict]
    assert any(word in s for s in r.text)
    said = r.text[[word in s for s in r.text].index(True)]
    assert " ± " in said or "p < " in said  # the p-value comes with its Monte Carlo error
    if r.warnings.get("fit") or r.warnings.get("diagnostics"):  # bad news is read first
        assert r.text[1] in r.warnings.get("fit", []) or r.text[1].startswith(
            "The sampler diagnostics are bad"
        )
    diag = post.check(warn=False)
    d = r.tables["diagnostics"]
    assert (
        d.loc["max r_hat", "value"] == diag["max_rhat"]
        and d.loc["divergences", "value"] == diag["divergences"]
    )
    assert r.warnings.get("diagnostics", []) == diag["messages"]
    assert len(r.tables["diagnostics_by_parameter"]) == len(post.diagnostics())
    n_warn = sum(len(v) for v in r.warnings.values())
    assert n_warn == len(diag["messages"]) + rejects + len(r.warnings.get("constraints", []))
    # one red box per warning, plus the summary box at the top when there is any
    assert _page_without_figures(r).count('class="bv-warning"') == n_warn + (n_warn > 0)


def test_score_mixture_good_fit_has_no_warning(spe, monkeypatch):
    post, _ = spe
    good = {"max_rhat": 1.001, "min_ess_bulk": 900.0, "divergences": 0, "ok": True, "messages": []}
    monkeypatch.setattr(post, "check", lambda warn=True: good)
    monkeypatch.setattr(
        post,
        "ppc",
        lambda **kw: {
            "ks_observed": 0.03,
            "p_value": 0.4,
            "ks_draws": np.full(200, 0.03),  # p = 0.4 ± 0.035: clearly above the cut-off
            "ks_replicated": np.full(200, 0.04),
        },
    )
    r = report(post, title="good", metrics=["average_precision"])
    assert r.warnings == {} and 'class="bv-warning"' not in _page_without_figures(r)
    assert any("no evidence" in s for s in r.text) and any("look fine" in s for s in r.text)


# ------------------------------------------------------------------- browser


def _browser():
    """A headless Chromium driver, or skip (fail when BAYEVAL_REQUIRE_BROWSER=1)."""
    required = os.environ.get("BAYEVAL_REQUIRE_BROWSER") == "1"
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.options import Options
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing = "selenium is not installed"
    else:
        missing = None
        for path in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
            if not os.path.exists(path):
                missing = f"{path} is missing"
    if missing:
        if required:
            pytest.fail(f"BAYEVAL_REQUIRE_BROWSER=1 but {missing}.")
        pytest.skip(f"no headless browser: {missing}")
    opts = Options()
    for arg in (
        "--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run "
        "--disable-background-networking --disable-component-update --disable-sync"
    ).split():
        opts.add_argument(arg)
    profile = tempfile.mkdtemp(prefix="bayeval-chrome-")
    opts.add_argument(f"--user-data-dir={profile}")
    opts.add_argument("--window-size=1200,1000")
    opts.binary_location = "/usr/bin/chromium"
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts), profile


def test_page_renders_in_headless_chromium(spe_report, tmp_path):
    import matplotlib.image as mpimg

    r = spe_report
    paths = r.save(tmp_path / "site")
    driver, profile = _browser()
    try:
        driver.set_page_load_timeout(60)
        driver.get(paths["report.html"].resolve().as_uri())
        assert driver.execute_script("return document.readyState") == "complete"
        assert driver.title == NASTY  # escaped in the source, shown verbatim, never run
        assert driver.execute_script("return document.querySelectorAll('script').length") == 0
        rows = driver.execute_script(
            "return document.querySelectorAll('#table-metrics tbody tr').length"
        )
        assert rows == len(r.tables["metrics"])
        imgs = driver.execute_script(
            "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, i.naturalHeight]);"
        )
        assert len(imgs) == len(r.figures) and all(c and w > 0 and h > 0 for c, w, h in imgs)
        warn_boxes = driver.execute_script("return document.querySelectorAll('.bv-warning').length")
        assert warn_boxes == (sum(len(v) for v in r.warnings.values()) + 1 if r.warnings else 0)
        # bring the first figure into view and find where it is on the screen
        rect = driver.execute_script(
            "const i = document.images[0]; i.scrollIntoView({block: 'start'});"
            "const r = i.getBoundingClientRect();"
            "return [r.left, r.top, r.width, r.height, window.innerWidth, window.innerHeight,"
            " window.devicePixelRatio];"
        )
        shot = tmp_path / "screenshot.png"
        assert driver.save_screenshot(str(shot))
        severe = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert severe == []
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    left, top, width, height, inner_w, inner_h, dpr = rect
    img = mpimg.imread(shot)
    assert img.shape[:2] == (round(inner_h * dpr), round(inner_w * dpr))
    rgb = img[..., :3]
    assert rgb.var() > 1e-3  # not a blank page
    y0, y1 = int(max(top, 0) * dpr), int(min(top + height, inner_h) * dpr)
    x0, x1 = int(max(left, 0) * dpr), int(min(left + width, inner_w) * dpr)
    assert y1 - y0 > 50 and x1 - x0 > 50
    figure_px = rgb[y0:y1, x0:x1]
    assert (figure_px.min(axis=-1) < 0.9).mean() > 0.01  # the plot is drawn there
    out = os.environ.get("BAYEVAL_SCREENSHOT_DIR")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(out) / "report_screenshot.png")


def test_first_line_names_the_sampler_when_there_was_one(plain):
    post, _ = plain
    assert "sampled by" not in report(post, title="t").to_markdown()  # given probabilities
    post.sampler = "nutpie"
    try:
        md = report(post, title="t").to_markdown()
    finally:
        del post.sampler
    first = [line for line in md.splitlines() if line.startswith("*Model:")][0]
    assert "sampled by nutpie" in first


# ------------------------------------------------- reproducibility and wording


def test_report_records_versions_date_and_data_hash(plain, tmp_path):
    import datetime
    from importlib import metadata

    post, _ = plain
    src = tmp_path / "scores.csv"
    src.write_text("s\n0.1\n")
    r = report(post, title="t", source=src)
    md = r.to_markdown()
    html_page = Report(r.title, tables=r.tables, text=r.text, meta=r.meta).to_html()  # the HTML shows them too
    for name, pkg in (("bayeval", "bayeval"), ("PyMC", "pymc"), ("PyTensor", "pytensor"),
                      ("NumPy", "numpy"), ("ArviZ", "arviz")):
        assert f"{name} {metadata.version(pkg)}" in md
        assert f"{name} {metadata.version(pkg)}" in html_page
    assert datetime.date.today().isoformat() in md and datetime.date.today().isoformat() in html_page
    assert post.data.fingerprint() in md and len(post.data.fingerprint()) == 64
    import hashlib

    assert hashlib.sha256(src.read_bytes()).hexdigest() in md
    assert "scores.csv SHA-256" in md
    # another data set, another hash
    other = toy(seed=5)[0]
    assert other.data.fingerprint() != post.data.fingerprint()
    assert report(post, title="t").meta[1][:-1] in r.meta[1]  # without source: the rest is the same


def test_p_values_near_the_cut_off_show_their_monte_carlo_error():
    from bayeval.report import _p_text, _ppc_verdict

    assert _p_text(0.045, 200) == "p = 0.045 ± 0.015"
    # 0.045 and 0.050 (the same fit on two installs) get the same verdict: no cliff
    assert _ppc_verdict(0.045, 200) == _ppc_verdict(0.050, 200) == "borderline"
    assert _ppc_verdict(0.0, 200) == "misfit" and _ppc_verdict(0.4, 200) == "fine"
    assert _p_text(0.0, 200) == "p < 0.005"


def test_reading_uses_plain_names_and_headings(plain):
    post, _ = plain
    r = report(post, title="t", metrics=[("precision_at_k", {"k": 100}), ("precision_at_k", {"k": 10})],
               constraints={"min_precision": 0.99, "min_recall": 0.99})
    assert r.tables["metrics"].index.tolist() == ["precision_at_k[k=100]", "precision_at_k[k=10]"]
    prose = " ".join(r.text)
    assert "precision at 100" in prose and "precision_at_k" not in prose
    assert "chance that the constraint fails" not in prose  # no sentence repeating the one above
    # P@10's vetted-only value: the vetted items' own top 10, no estimate to compare with the interval
    assert "Monte Carlo error" in prose and "no estimate of this pool's precision at 10" in prose
    page = _page_without_figures(r)
    assert "(sections: constraints)" not in page and "“Threshold under constraints”" in page


def test_report_says_what_it_is_doing_when_asked(plain):
    post, _ = plain
    said = []
    report(post, title="t", constraints={"min_precision": 0.8}, progress=said.append)
    assert said and all(m.startswith("report: ") and "s so far)" in m for m in said)
    assert any("metric table" in m for m in said) and any("threshold" in m for m in said)
    with pytest.raises(TypeError, match="progress"):
        report(post, title="t", progress="loud")


def test_pr_curve_is_zoomed_to_the_data():
    rng = np.random.default_rng(3)
    s = np.sort(rng.random(300))
    p = np.where(s > 0.3, 0.97, 0.6)  # precision stays high everywhere
    post = Posterior.from_probabilities(EvalData(s), p, draws=100, random_seed=0)
    ax = report(post, title="t", metrics=["average_precision"]).figures["pr_curve"].axes[0]
    lo, hi = ax.get_ylim()
    assert 0.4 <= lo < 0.9 and hi == pytest.approx(1.02)


def test_vetted_only_caveat_is_said_once(plain):
    post, truth = plain
    r = report(post, title="t", metrics=["average_precision", "roc_auc"], truth=truth)
    prose = " ".join(r.text)
    assert prose.count("not comparable with the interval") == 1
    assert prose.count("the vetted-only estimate from 25 vetted items is") == 2


def test_default_model_has_a_calibration_section():
    import bayeval as be

    rng = np.random.default_rng(3)
    q = rng.beta(1, 3, 400)
    truth = (rng.random(400) < q).astype(int)
    lab = np.full(400, np.nan)
    lab[:40] = truth[:40]
    post = be.fit(EvalData(q, lab), random_seed=0, draws=300)
    # min_flagged=0: the threshold that meets this floor flags 6 of the 400 items, which the
    # default min_flagged (10) refuses; asked for here, the note names the rule that chose it
    r = report(post, title="calibration", truth=truth,
               constraints={"min_precision": 0.5, "prob": 0.8, "min_flagged": 0})
    assert "calibration_curve" in r.figures and "calibration" in r.tables
    assert list(r.tables["calibration"].index) == list(post.comparison.index)
    md = r.to_markdown()
    assert "## Calibration curve learned from the vetted labels" in md
    assert "with probability at least 0.8, the one with the highest expected recall" in md
    assert r.figures["calibration_curve"].axes[0].get_ylabel() == "P(positive | score)"


def test_report_of_an_all_vetted_pool_says_the_values_are_exact(small_default_fit):
    post, truth = small_default_fit("all")
    r = report(post, title="t", truth=truth,
               metrics=["average_precision", ("precision_at_k", {"k": 100}), "roc_auc"])
    prose = " ".join(r.text)
    assert "Every item is vetted: the metrics are the exact values of this pool, with no uncertainty." in prose
    for said_before in ("uncertain by up to", "not comparable with the interval", "are drawn from calibration",
                        "vetting more items", "vet more items", "the vetted-only estimate"):
        assert said_before not in prose, said_before
    table = r.tables["metrics"]
    assert (table["sd"] == 0).all()  # rounding (e.g. 3e-16) is shown as what it is: 0
    assert "e-1" not in r.to_markdown()
    # P@100 of a 120-item pool, all vetted: the pool's own value, as bayeval.metrics gives it (a k above
    # the 120 items is refused: test_cards.py::test_posterior_metric_refuses_precision_at_k_above_...)
    assert table["vetted_only"].to_numpy() == pytest.approx(table["truth"].to_numpy())
    top = np.argsort(-post.data.scores, kind="stable")[:100]
    assert table.loc["precision_at_k", "truth"] == pytest.approx(truth[top].sum() / 100)


def test_report_with_no_vetted_item_says_so_and_nothing_about_the_labels(small_default_fit):
    post, truth = small_default_fit("none")
    r = report(post, title="t", truth=truth, metrics=["average_precision", "roc_auc"])
    prose = " ".join(r.text)
    # said once, by the data's caveat read right after the data sentence (it says how to vet)
    assert prose.count("no vetted labels: every interval is the prior's") == 1
    for about_labels in ("learned from the 0 vetted labels", "carries the most weight",
                         "the vetted labels contradict", "vetted-only estimate"):
        assert about_labels not in prose, about_labels
    assert r.tables["metrics"]["vetted_only"].isna().all()


def test_report_vetted_only_is_undefined_without_a_vetted_positive():
    # 10 vetted items, all negative: AP and recall of the vetted items alone are undefined ("–"),
    # as ROC AUC is, and the reading gives no number nor uncertainty for them
    rng = np.random.default_rng(0)
    s = rng.random(100)
    y = np.full(100, np.nan)
    y[np.argsort(s)[:10]] = 0
    post = Posterior.from_probabilities(EvalData(s, y), s, draws=100, random_seed=0)
    r = report(post, title="t", metrics={"AP": "average_precision", "recall at 0.5": ("recall", {"threshold": 0.5}),
                                         "AUC": "roc_auc"})
    assert r.tables["metrics"]["vetted_only"].isna().all()
    prose = " ".join(r.text)
    assert "the vetted-only estimate from 10 vetted items" not in prose and "uncertain by up to" not in prose
    assert prose.count("the vetted-only estimate is undefined here") == 3


# ------------------------------------- the vetted items each vetted-only number rests on, and how chosen


def _threshold_toy():
    """150 calibrated items, 25 vetted at random, and precision/recall/F1 at 0.8, P@10, AP."""
    post, truth = toy()
    items = {"AP": "average_precision", "P@10": ("precision_at_k", {"k": 10}),
             "precision at 0.8": ("precision", {"threshold": 0.8}), "recall at 0.8": ("recall", {"threshold": 0.8}),
             "F1 at 0.8": ("f_score", {"threshold": 0.8})}
    return post, truth, items


def test_vetted_only_n_counts_the_vetted_items_each_number_rests_on():
    # the reading said "the vetted-only estimate from 25 labels" and ±0.20 of every row, but precision
    # at 0.8 is the share of positives among the few vetted items 0.8 flags, recall among the vetted positives
    post, truth, items = _threshold_toy()
    data = post.data
    r = report(post, title="t", metrics=items, truth=truth)
    t = r.tables["metrics"]
    vetted, y, s = data.vetted, np.nan_to_num(data.labels), data.scores
    flagged, positive = int((vetted & (s >= 0.8)).sum()), int((vetted & (y == 1)).sum())
    assert 0 < flagged < 25 and 0 < positive < 25
    assert t["vetted_only_n"].to_dict() == {"AP": 25, "P@10": 10, "precision at 0.8": flagged,
                                            "recall at 0.8": positive,
                                            "F1 at 0.8": int((vetted & ((s >= 0.8) | (y == 1))).sum())}
    # the precision's value is that of those flagged items: its count is what it rests on
    assert t.loc["precision at 0.8", "vetted_only"] == pytest.approx(y[vetted & (s >= 0.8)].mean())
    prose = " ".join(r.text)
    assert "from 25 labels" not in prose
    assert f"the vetted-only estimate from the {flagged} vetted items it flags is" in prose
    assert f"the vetted-only estimate from the {positive} vetted positives is" in prose
    # P@10: the vetted items' own top 10, no estimate of the pool's P@10 (test_vetted_only_at_a_rank_k_...)
    assert "the vetted items' own P@10 is" in prose and "the vetted-only estimate from the top 10" not in prose
    # each row's ±1/√n from its own n (here: not known to be random, so said conditionally)
    assert f"(±{1 / np.sqrt(flagged):.2f} if the vetted items were drawn at random)" in prose
    assert "if the vetted items were drawn at random, from 25 it is uncertain by up to about ±0.20 (1/√25)" in prose


def test_vetted_only_n_per_category_mean_and_ks():
    from bayeval.core.evaluate import vetted_only_n

    post, _ = toy(categories=True, seed=1)
    data = post.data
    each = vetted_only_n(data, "precision", threshold=0.5, category="each")
    want = [int((data.vetted & (data.scores >= 0.5) & (data.categories == c)).sum()) for c in each["category"].values]
    assert each.values.tolist() == want and int(vetted_only_n(data, "precision", threshold=0.5,
                                                             category="mean")) == sum(want)
    ks = vetted_only_n(data, "precision_at_k", k=[5, 20, 40], category="pooled")  # 25 vetted: P@40 undefined
    assert ks.dims == ("k",) and ks.values.tolist() == [5, 20, 0]
    with pytest.raises(ValueError, match="needs hard predictions"):
        vetted_only_n(data, "precision", category="pooled")


def test_vetted_only_of_items_chosen_on_purpose_is_not_called_an_estimate():
    # labels chosen by `bayeval vet` or a design: the report said "the vetted-only estimate from 79 labels
    # ... uncertain by up to about ±0.11", as if they were a random sample
    post, truth, items = _threshold_toy()
    r = report(post, title="t", metrics=items, truth=truth, vetted_selection={None: 15, "design": 10})
    prose = " ".join(r.text)
    assert ("the vetted-only value from 25 vetted items is" in prose
            and "not an estimate of this pool's: 10 of the 25 vetted items were chosen on purpose (design: 10), "
                "not drawn at random" in prose)
    assert "vetted-only estimate" not in prose and "uncertain by up to" not in prose and "±" not in prose
    assert "10 of the vetted items were chosen on purpose, not drawn at random, so it is no estimate of the " \
           "pool's metric" in r.notes["metrics"][1]
    # known random: the ±1/√n, said plainly; each later row with its own
    r = report(post, title="t", metrics=items, truth=truth, vetted_selection={"random": 25})
    prose = " ".join(r.text)
    assert "the vetted items were drawn at random, and from 25 it is uncertain by up to about ±0.20 (1/√25)" in prose
    assert "if the vetted items were drawn at random" not in prose
    assert f"(±{1 / np.sqrt(r.tables['metrics'].loc['recall at 0.8', 'vetted_only_n']):.2f})." in prose


@pytest.mark.parametrize("selection", [{"random": 40}, None])
def test_vetted_only_at_a_rank_k_is_not_called_an_estimate_of_the_pools(selection):
    # 40 of 2,000 items vetted at random: the vetted items' top 10 stand for the pool's top ~500, so their
    # P@10 (0.5 here, the pool's 1.0) is no estimate of the pool's P@10; the reading called it "the vetted-only
    # estimate from the top 10 vetted items ... uncertain by up to about ±0.32 (1/√10)", the note "it estimates
    # the pool's metric"
    from bayeval._report_text import fmt

    rng = np.random.default_rng(0)
    s = rng.random(2000)
    y = (rng.random(2000) < s ** 4).astype(int)
    lab = np.full(2000, np.nan)
    vetted = rng.choice(2000, 40, replace=False)
    lab[vetted] = y[vetted]
    post = Posterior.from_probabilities(EvalData(s, lab), s ** 4, draws=50, random_seed=0)
    items = {"AP": "average_precision", "P@10": ("precision_at_k", {"k": 10}),
             "recall_at_k": ("recall_at_k", {"k": 20}), "precision at 0.5": ("precision", {"threshold": 0.5})}
    r = report(post, title="t", metrics=items, truth=y, vetted_selection=selection)
    prose = " ".join(r.text)
    t = r.tables["metrics"]
    pak = [x for x in r.text if "the P@10 on these" in x][0]
    assert f"the vetted items' own P@10 is {fmt(t.loc['P@10', 'vetted_only'])} (precision among the 10 " \
           "highest-scored of the 40 vetted items), no estimate of this pool's P@10" in pak
    assert "their top 10 stand for roughly the pool's top 500 (10 × 2000/40), not its top 10" in pak
    rak = [x for x in r.text if "the recall at 20 on these" in x][0]  # "recall at 20", not "recall at k"
    assert "the vetted items' own recall at 20 is" in rak and "top 20 stand for roughly the pool's top 1000" in rak
    for s in (pak, rak):
        assert "estimate from" not in s and "±" not in s and "uncertain by" not in s
    # AP and precision at a threshold keep their ±1/√n; the first one says it does not hold at a rank k
    assert "the vetted-only estimate from 40 vetted items is" in prose
    assert "each vetted-only number below but those at a rank k" in prose
    assert "the vetted-only estimate from the " in [x for x in r.text if "the precision at 0.5 on" in x][0]
    note = r.notes["metrics"][1]
    own = "at a rank k (precision or recall at k): there it is the vetted items' own value, that of their k"
    assert ("and even then not " if selection is None else "-- except ") + own in note
    assert "roughly the pool's top k × 2000/40 (about k × 50), not its top k, so it is no estimate of the " \
           "pool's metric at k" in note


def test_report_of_a_session_reads_how_its_store_chose_the_vetted_items(tmp_path):
    from bayeval.active import LabelStore

    post, truth, items = _threshold_toy()
    vetted = np.flatnonzero(post.data.vetted)
    store = LabelStore(tmp_path / "s.db")
    store.new_batch(vetted[:5].tolist(), strategy="random")
    store.new_batch(vetted[5:12].tolist(), strategy="expected_change+explore")

    class Session:  # what report() reads of an active-testing session
        posterior = post

    Session.store = store
    prose = " ".join(report(Session(), title="t", metrics=items).text)
    assert "7 of the 25 vetted items were chosen on purpose (expected_change+explore: 7)" in prose
    store.close()


@pytest.mark.parametrize(("selection", "error", "match"), [
    ({"random": 20}, ValueError, r"counts 20 vetted items, but the data has 25"),
    ({"random": "25"}, TypeError, r"`vetted_selection` must be a dict \{strategy \(str\) or None"),
    ([("random", 25)], TypeError, r"got \[\('random', 25\)\]"),
])
def test_report_refuses_a_bad_vetted_selection(plain, selection, error, match):
    with pytest.raises(error, match=match):
        report(plain[0], title="t", metrics=["roc_auc"], vetted_selection=selection)


def test_card_vetted_selection_reads_the_store_batches(tmp_path):
    from bayeval._cli_store import card_vetted_selection
    from bayeval.active import LabelStore
    from bayeval.cards import load_card

    (tmp_path / "s.csv").write_text("id,s,y\n" + "".join(f"i{j},{j / 10},{'' if j > 2 else j % 2}\n"
                                                        for j in range(10)))
    (tmp_path / "card.toml").write_text('title = "t"\ndescription = "d"\n'
                                        'data = { file = "s.csv", score = "s", label = "y", id = "id" }\n'
                                        'model = { name = "calibration" }\n')
    card = load_card(tmp_path)
    assert card_vetted_selection(card, card.load_data(store=True)[0]) is None  # no store: not recorded
    with LabelStore(card.store_file) as st:
        b = st.new_batch(["i7", "i8"], strategy="design")
        st.add(["i7", "i8"], [1, 0], batch=b)
    assert card_vetted_selection(card, card.load_data(store=True)[0]) == {None: 3, "design": 2}
