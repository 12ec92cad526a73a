"""The benchmark scripts stay runnable: each answers --help when run as a script.

Running ``python benchmarks/NAME.py`` puts ``benchmarks/`` first on ``sys.path``, so a
script named like a standard-library module (``select.py`` did) breaks every import
of that module in the other scripts (``subprocess`` imports ``select``).
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

BENCH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(p for p in BENCH.glob("*.py"))


def test_no_script_shadows_a_standard_module():
    clashes = [p.name for p in SCRIPTS if p.stem in sys.stdlib_module_names]
    assert not clashes, f"rename {clashes}: they shadow standard-library modules"


#: runs every script's ``--help`` the way ``python benchmarks/NAME.py --help`` does (the script's
#: folder first on ``sys.path``, ``__name__ == "__main__"``), in one interpreter so that the
#: imports are paid once; prints one JSON line per script
_HELP_DRIVER = r"""
import contextlib, io, json, runpy, sys, traceback
bench, scripts = sys.argv[1], sys.argv[2:]
sys.path.insert(0, bench)
for path in scripts:
    out, err, code = io.StringIO(), io.StringIO(), 0
    sys.argv = [path, "--help"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            code = 1
            traceback.print_exc(file=err)
    print(json.dumps({"script": path, "code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}),
          file=sys.__stdout__, flush=True)
"""


@pytest.fixture(scope="module")
def helps():
    out = subprocess.run([sys.executable, "-c", _HELP_DRIVER, str(BENCH), *map(str, SCRIPTS)],
                         capture_output=True, text=True, timeout=600)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith('{"script"')]
    assert rows, out.stderr[-2000:]
    return {r["script"]: r for r in rows}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_script_help(script, helps):
    r = helps.get(str(script))
    assert r is not None, f"{script.name}: the driver stopped before it (an earlier script exited the process?)"
    assert r["code"] == 0, r["stderr"][-2000:]
    assert "usage:" in r["stdout"]


# ------------------------------------------------------------------ fit_speed.py


def _fit_speed():
    sys.path.insert(0, str(BENCH))
    import fit_speed

    return fit_speed


def test_fit_speed_counts_evaluations():
    """Gradient counts: SamplingInfo counters first, else NUTS n_steps (scaled when tuning was discarded)."""
    import types

    import arviz as az
    import numpy as np

    fs = _fit_speed()
    steps = np.full((2, 10), 7)
    with_warmup = az.from_dict(posterior={"x": np.zeros((2, 10))}, sample_stats={"n_steps": steps},
                               warmup_sample_stats={"n_steps": np.full((2, 30), 3)}, save_warmup=True)
    draws_only = az.from_dict(posterior={"x": np.zeros((2, 10))}, sample_stats={"n_steps": steps})
    info = types.SimpleNamespace(sampler="pymc")
    post = types.SimpleNamespace(sampling=info, idata=with_warmup)
    assert fs.evaluations(post, 10, 30) == {"sampler": "pymc", "n_grad": 140 + 180, "n_logp": 0, "count": "n_steps"}
    post.idata = draws_only
    assert fs.evaluations(post, 10, 30)["n_grad"] == 140 * 4  # (draws + tune) / draws
    post.sampling = types.SimpleNamespace(sampler="nutpie", n_grad_evals=123, n_logp_evals=4)
    assert fs.evaluations(post, 10, 30) == {"sampler": "nutpie", "n_grad": 123, "n_logp": 4, "count": "SamplingInfo"}
    assert fs._overhead({"time": 2.0, "n_grad": 100, "n_logp": 0}, 0.01, 0.5) == 2.0


@pytest.mark.parametrize("models, fresh_processes", [(["Calibration logistic"], False),
                                                     pytest.param(["ScoreMixture normal/normal", "Calibration logistic"],
                                                                  True, marks=pytest.mark.slow)])
def test_fit_speed_quick_core(models, fresh_processes, monkeypatch):
    """A tiny version of ``fit_speed.py --quick``: every row, finite positive times, counts and ratios.

    Each path's fits run in a fresh Python process (``--one``) under ``-m slow``; the default run
    calls the same ``one`` in this process (its JSON round trip included), which spares two
    interpreter starts and PyTensor's compile-cache scan (~25 CPU s of the test's ~40)."""
    import json
    import math

    fs = _fit_speed()
    if not fresh_processes:
        monkeypatch.setattr(fs, "run_one", lambda spec, **kw: json.loads(json.dumps(fs.one(spec))))
    rows = fs.measure(models, [300], draws=30, tune=30, chains=1, timeout=600, log=lambda *a, **k: None)
    assert [(r["model"], r["n"]) for r in rows] == [(m, 300) for m in models]
    for r in rows:
        for key in ("base_cold", "base_warm", "new_cold", "new_warm", "speedup_cold", "speedup_warm", "t_grad",
                    "t_logp", "base_cold_overhead", "base_warm_overhead"):
            assert math.isfinite(r[key]) and r[key] > 0, (r["model"], key, r[key])
        # the baseline keeps its tuning draws: at least one leapfrog step per iteration and chain
        assert r["base_cold_grads"] >= 60 and r["base_warm_grads"] >= 60
        assert r["new_warm_grads"] is not None and r["new_warm_grads"] + r["new_warm_logps"] > 0
        assert math.isfinite(r["new_warm_overhead"]) and r["new_warm_overhead"] > 0
    # --resume: measured (model, N) are kept, not measured again (no subprocess: returns at once)
    assert fs.measure(models, [300], draws=30, tune=30, chains=1, done=rows, log=None) == rows
    text = fs.report(rows, None, cmd="test", settings="tiny", elapsed=1.0, complete=True, cold_compiledir=False)
    assert all(f"### {m}" in text for m in models)
    lines = fs.targets(rows, None, ref_n=300)
    assert len(lines) == 5 and all(any(w in ln for w in ("MET", "MISSED", "NOT MEASURED")) for ln in lines)


def test_fit_speed_agreement_tells_the_same_posterior_from_a_shifted_or_narrower_one():
    """``--agreement``: z of the means / quantiles against their Monte Carlo error, sd ratios,
    the verdict and the weights' ESS scaling of importance-sampled draws."""
    import arviz as az
    import numpy as np

    fs = _fit_speed()
    rng = np.random.default_rng(0)
    names = ["a", "b"]

    def idata(shift=0.0, scale=1.0):
        return az.from_dict(posterior={"a": rng.normal(shift, scale, (2, 2000)),
                                       "b": rng.normal(0.0, 1.0, (2, 2000, 3))})

    ref = fs._param_stats(idata(), names)
    same = fs.agreement_stats(ref, fs._param_stats(idata(), names))
    assert (same["n_params"], same["n_compared"]) == (4, 12)
    assert 2.5 < same["z_bound"] < 3.5  # the 95% bound of the largest of 12 |N(0, 1)|
    assert same["max_z_mean"] <= same["z_bound"] and same["max_z_quantile"] <= same["z_bound"]
    assert fs.agreement_verdict({**same, "error": ""}) == "agree"
    assert 0.95 < same["sd_ratio_min"] and same["sd_ratio_max"] < 1.05
    # a mean 0.3 sd off: its Monte Carlo s.e. is about sqrt(2 / 4000) = 0.022 sd, so z is about 13
    shifted = fs.agreement_stats(ref, fs._param_stats(idata(shift=0.3), names))
    assert shifted["max_z_mean"] > 8 and fs.agreement_verdict({**shifted, "error": ""}) == "differ"
    # a posterior 20% too narrow: the means agree, the quantiles and the sd ratio do not
    narrow = fs.agreement_stats(ref, fs._param_stats(idata(scale=0.8), names))
    assert narrow["max_z_quantile"] > 8 and abs(narrow["sd_ratio_min"] - 0.8) < 0.05
    # draws resampled from weighted proposals: an ESS of 40 behind 4,000 draws is 10x the s.e.
    draws = idata()
    plain, weighted = fs._param_stats(draws, names), fs._param_stats(draws, names, weights_ess=40)
    for key in ("mean", "q05", "q95"):
        np.testing.assert_allclose(weighted["se"][key], 10 * plain["se"][key])
    meta = {"cmd": "python benchmarks/fit_speed.py --agreement", "date": "today", "versions": "v", "machine": "m",
            "settings": "s", "complete": True, "elapsed": 1.0,
            "rows": [{"model": "M", "n": 10_000, "error": "", "sampler": "importance", "pareto_k": 0.2,
                      "base_time": 9.0, "new_time": 1.0, "base_divergences": 0, **shifted},
                     {"model": "N", "n": 10_000, "error": "RuntimeError: boom"}]}
    text = "\n".join(fs.agreement_section(meta))
    assert "| M | 10,000 | importance | 0.20 | 4 |" in text and "| differ |" in text
    assert "| N | 10,000 | failed: RuntimeError: boom |" in text
    # spliced before the auto section, and replaced in place by the next run
    doc = fs.splice_section("# T\n\n## Per model\n\nx\n\n## `ScoreMixture.auto`\n\ny\n", "## Agreement with NUTS",
                            text)
    assert doc.index("## Agreement with NUTS") < doc.index("## `ScoreMixture.auto`")
    again = fs.splice_section(doc, "## Agreement with NUTS", "## Agreement with NUTS\n\nnew\n")
    assert again.count("## Agreement with NUTS") == 1 and "| M |" not in again and "y" in again


def test_fit_speed_backend_section_and_splice():
    """The 'Sampler backends' section: ratios to the C backend, failures listed, and the
    section replaced in place (the other sections kept)."""
    fs = _fit_speed()
    rows = [
        {"model": "LabelFlip", "n": 10_000, "backend": "pymc", "error": "", "cold_time": 20.0, "warm_time": 10.0,
         "warm_min_ess_bulk": 500.0, "warm_divergences": 0, "warm_max_rhat": 1.01, "ess_per_s": 50.0,
         "speedup_warm": 1.0, "speedup_cold": 1.0, "ess_ratio": 1.0},
        {"model": "LabelFlip", "n": 10_000, "backend": "nutpie", "error": "", "cold_time": 30.0, "warm_time": 5.0,
         "warm_min_ess_bulk": 500.0, "warm_divergences": 1, "warm_max_rhat": 1.0, "ess_per_s": 100.0,
         "speedup_warm": 2.0, "speedup_cold": 0.67, "ess_ratio": 2.0},
        {"model": "LabelFlip", "n": 10_000, "backend": "numpyro", "error": "NotImplementedError: no erfcx"},
    ]
    meta = {"cmd": "python benchmarks/fit_speed.py --backends", "date": "today", "versions": "v", "machine": "m",
            "settings": "s", "rows": rows, "complete": True, "elapsed": 1.0}
    text = "\n".join(fs.backend_section(meta))
    assert "`nutpie`: LabelFlip 2.00× time, 2.00× ESS/s" in text
    assert "failed: NotImplementedError: no erfcx" in text
    doc = "# T\n\n## Per model\n\nrows\n\n## `ScoreMixture.auto`\n\nauto\n"
    once = fs.splice_section(doc, "## Sampler backends", text)
    assert once.index("## Per model") < once.index("## Sampler backends") < once.index("## `ScoreMixture.auto`")
    twice = fs.splice_section(once, "## Sampler backends", text.replace("2.00×", "3.00×"))
    assert twice.count("## Sampler backends") == 1 and "3.00×" in twice and "auto\n" in twice


def test_fit_speed_refit_section_targets_and_kept_rows():
    """The 'Refits from the previous fit' section: per model the steady speed-up over plain
    PyMC, the first refit over the steady ones, the agreement verdict, and each row's run."""
    fs = _fit_speed()
    ag = {"max_z_mean": 1.0, "max_z_quantile": 2.0, "z_bound": 3.0, "sd_ratio_min": 0.9, "sd_ratio_max": 1.1}
    bad = {**ag, "max_z_quantile": 4.0}

    def row(model, times, agreement, **extra):
        fits = [{"step": k, "time": t, "sampler": "importance", "pareto_k": 0.1, "ess": 500.0, "fallback": "",
                 "agreement": agreement if k in (1, 2) else None} for k, t in enumerate(times)]
        return {"model": model, "n": 10_000, "error": "", "git": "abc1234",
                "baseline": [{"step": 1, "time": 30.0}, {"step": 2, "time": 20.0}], "fits": fits, **extra}

    rows = [row("ScoreMixture normal/normal", [5.0, 3.0, 2.0, 2.0], ag, load="1.0, 1.0, 1.0"),
            row("LabelFlip", [50.0, 2.0, 1.0, 3.0], bad)]
    meta = {"cmd": "python benchmarks/fit_speed.py --refits", "date": "today", "versions": "v", "machine": "m",
            "settings": "s", "rows": rows, "complete": True, "elapsed": 1.0}
    text = "\n".join(fs.refit_section(meta))
    assert ("ScoreMixture normal/normal (N=10,000): steady refit 10.0× faster than plain PyMC (target ≥ 5×); "
            "first refit / steady = 1.50") in text
    assert "LabelFlip (N=10,000): steady refit 10.0× faster than plain PyMC (target ≥ 10×)" in text
    assert "agreement with PyMC (data 1 and 2): yes" in text and "agreement with PyMC (data 1 and 2): NO" in text
    assert "| git abc1234, load 1.0, 1.0, 1.0 |" in text and text.count("| git abc1234 |") == 4


# ------------------------------------------------------------------ annotator_real.py


def _annotator_real():
    sys.path.insert(0, str(BENCH))
    import annotator_real

    return annotator_real


def test_annotator_real_pools_a_results_table_like_its_trials(tmp_path):
    """The per-setting table of a results file, read back by --add-table, pools to the same
    counts (and errors and widths to the printed precision) as the trials it was made from;
    the paired comparison counts the trials only one interval covered."""
    import numpy as np
    import pandas as pd

    ar = _annotator_real()
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(6):
        for name, refs, gold in [("rte", 1, 0), ("rte", 3, 30), ("duck", 1, 30)]:
            truth = 0.8
            row = dict(dataset=name, refs=refs, gold=gold, seed=seed, truth=truth, error_phi=0.1,
                       converged=bool(seed % 4), max_rhat=1.0, divergences=0, prior_sensitivity=0.01,
                       prior_dominated=False, ds_same_mean=0.8, ds_crowd_mean=0.8)
            for m in ("stacked", "structured") + (("gold_only", "rectified") if gold else ()):
                c = rng.normal(0.8, 0.03)
                half = rng.uniform(0.02, 0.08)
                row.update({f"{m}_mean": c, f"{m}_lo": c - half, f"{m}_hi": c + half})
            rows.append(row)
    df = pd.DataFrame(rows)
    path = tmp_path / "earlier.md"
    path.write_text("# earlier\n\n" + ar.to_markdown(ar.summarize(df)) + "\n\nmore text\n")
    from_trials = ar.pooled(ar._sums(df), ["dataset", "gold"])
    from_table = ar.pooled(ar.sums_from_md(str(path)), ["dataset", "gold"])
    for col in from_trials.columns:
        if col.endswith(("_mae", "_width")):
            np.testing.assert_allclose(from_table[col], from_trials[col], atol=6e-4)
        else:
            assert list(from_table[col]) == list(from_trials[col]), col
    assert from_trials.loc[0, "converged"] == "4/6 (66.7%)"
    both = ar.pooled(pd.concat([ar._sums(df), ar.sums_from_md(str(path))]), ["dataset", "gold"])
    assert both.loc[0, "trials"] == 12
    # the paired split: only one of the two intervals covered
    pair = ar.paired(df)
    g = df[df.gold > 0]
    hit = {m: (g[f"{m}_lo"] <= g.truth) & (g.truth <= g[f"{m}_hi"]) for m in ("stacked", "gold_only")}
    assert pair["only_stacked"].sum() == int((hit["stacked"] & ~hit["gold_only"]).sum())
    assert pair["only_gold_only"].sum() == int((~hit["stacked"] & hit["gold_only"]).sum())
    with pytest.raises(SystemExit, match="no per-setting table"):
        ar.sums_from_md(str(tmp_path / "none.md") if (tmp_path / "none.md").write_text("nothing") else "")


def test_annotator_real_replays_the_gold_items_of_recorded_trials():
    """Trials recorded before the guarded reading get their gold items' interval
    recomputed exactly by replaying the trial's draws: it agrees with the 4,000-draw
    interval they recorded within its Monte Carlo error, and the guarded interval joins it
    with the recorded stacked interval. A trial whose draws do not replay is refused."""
    import numpy as np
    import pandas as pd

    ar = _annotator_real()
    rec = pd.read_csv(BENCH / "results" / "annotator_real_seed20.csv")
    rec = rec[rec.seed == 20].reset_index(drop=True)
    assert "guarded_lo" not in rec
    out = ar.replay_gold(rec)
    gold = out.gold > 0
    assert gold.sum() == 10 and out.loc[~gold, "guarded_lo"].isna().all()
    g = out[gold]
    for end in ("lo", "hi"):  # one item of DUCK's 108 is 0.009
        np.testing.assert_allclose(g[f"gold_only_{end}"], rec.loc[gold, f"gold_only_{end}"], atol=0.0095)
    assert (g.guarded_lo == np.minimum(g.stacked_lo, g.gold_only_lo)).all()
    assert (g.guarded_hi == np.maximum(g.stacked_hi, g.gold_only_hi)).all()
    assert (g.guarded_mean == g.stacked_mean).all()
    # the exact interval is on the grid of the item count
    n = g.n_items.to_numpy()
    np.testing.assert_allclose(g.gold_only_lo * n, np.round(g.gold_only_lo * n), atol=1e-9)
    assert ar.replay_gold(out).equals(out)  # nothing left to replay
    bad = rec.copy()
    bad.loc[gold.to_numpy().nonzero()[0][0], "truth"] = 0.5
    with pytest.raises(SystemExit, match="does not give the recorded accuracies"):
        ar.replay_gold(bad)


def test_real_scores_side_by_side_compares_the_same_label_sets():
    """The mixture part's side-by-side table takes the default's rows of exactly the label
    sets the mixture saw, per pool and pooled, and the threshold rule of both."""
    import pandas as pd

    sys.path.insert(0, str(BENCH))
    import real_scores

    rows = []
    for model, sets in (("default", range(5)), ("score mixture", range(2))):
        for pool in ("a", "b"):
            for s in sets:
                for metric, cov in (("AP", s % 2 == 0), ("F1", True)):
                    w = 0.1 if model == "default" else 0.02
                    rows.append(dict(pool=pool, budget=30, set=s, model=model, metric=metric, covered=cov,
                                     width=w * (s + 1), abs_err=0.01 * (s + 1), met=None))
                rows.append(dict(pool=pool, budget=30, set=s, model=model, metric="threshold_rule",
                                 covered=model == "default" or s == 0, width=None, abs_err=None, met=True))
    df = pd.DataFrame(rows)
    mix, default = df[df.model != "default"], df
    table, rule = real_scores.side_by_side(mix, default)
    # the default on sets 0 and 1 only (not 2-4): AP covered on set 0, F1 always -> 3 of 4
    assert table.loc["a", "default: coverage"] == 0.75 and table.loc["a", "mixture: coverage"] == 0.75
    assert table.loc["a", "default: width"] == round((0.1 + 0.2) / 2, 3)
    assert table.loc["**pooled**", "mixture: MAE"] == 0.015
    assert "held in 0.500 of the label sets where the mixture" in rule and "against 1.00 for the default" in rule
    with pytest.raises(SystemExit, match="no rows of the default"):
        real_scores.side_by_side(mix, default[default.model != "default"])


def test_label_efficiency_labels_to_width_interpolates_and_requires_coverage():
    sys.path.insert(0, str(BENCH))
    import label_efficiency as L
    import pandas as pd

    rows = []
    for b, w, cov in ((20, 0.4, 1.0), (50, 0.2, 1.0), (100, 0.05, 1.0)):  # method "a": reaches 0.10 between 50 and 100
        rows += [{"pool": "p", "metric": "AP", "method": "a", "budget": b, "width": w, "covered": cov}] * 2
    for b, w, cov in ((20, 0.05, 0.5), (50, 0.05, 0.5), (100, 0.05, 1.0)):  # "b": narrow at once, covers only at 100
        rows += [{"pool": "p", "metric": "AP", "method": "b", "budget": b, "width": w, "covered": cov}] * 2
    rows += [{"pool": "p", "metric": "AP", "method": "c", "budget": 20, "width": 0.3, "covered": 1.0}]  # never
    need = L.labels_to_width(pd.DataFrame(rows), 0.10)
    # log-linear between (50, 0.2) and (100, 0.05): 0.10 is half-way in log width -> sqrt(50 * 100)
    assert need.loc[("p", "AP"), "a"] == pytest.approx((50 * 100) ** 0.5)
    assert need.loc[("p", "AP"), "b"] == 100
    assert np.isnan(need.loc[("p", "AP"), "c"])



def test_label_efficiency_targets_of_a_run_without_random_labels():
    """A run of other routes only (``--routes design``) reports the random-label targets as
    not measured instead of failing on an empty table."""
    sys.path.insert(0, str(BENCH))
    import label_efficiency as L
    import pandas as pd

    def rows(method):
        return [{"pool": pool, "metric": "AP", "method": method, "budget": 30, "width": 0.2, "covered": cov}
                for pool, cov in (("p", True), ("p", False), ("q", True), ("q", True))]

    text = "\n".join(L._targets_lines(pd.DataFrame(rows("default/design"))))
    assert "no random-label rows in this run | not measured" in text
    text = "\n".join(L._targets_lines(pd.DataFrame(rows("default/random"))))
    assert "0.750 over 4 intervals | no" in text and "lowest 0.50 (p); below 0.75: p 0.50 | no" in text
    # with the label sets recorded, a below-target pool says how many its cell rests on
    sets = pd.DataFrame(rows("default/random")).assign(set=[0, 1, 0, 1])
    text = "\n".join(L._targets_lines(sets))
    assert "below 0.75: p 0.50 (2 label sets) | no" in text


def test_label_efficiency_compares_widths_at_equal_coverage():
    """An interval that covers less often than it says is widened until it covers as often as
    the other; one of width 0 off the truth never gets there, and the table says so."""
    sys.path.insert(0, str(BENCH))
    import label_efficiency as L
    import pandas as pd

    truth = 0.6
    honest = [{"mean": 0.6 + d, "lo": 0.5 + d, "hi": 0.7 + d, "truth": truth} for d in np.linspace(-0.15, 0.15, 20)]
    # 20 intervals 0.2 wide, centres spread over +-0.15: 12 cover as they are; 18 of 20 need factor 1.34
    c, w, cov = L.width_at_coverage(pd.DataFrame(honest), 0.9)
    assert 1.2 < c < 1.4 and cov >= 0.9 and abs(w - 0.2 * c) < 0.01
    c1, w1, _ = L.width_at_coverage(pd.DataFrame(honest), 0.6)
    assert c1 <= 1.0 and w1 < w
    stuck = [{"mean": 0.2, "lo": 0.2, "hi": 0.2, "truth": truth}] * 5 + honest[:5]
    c2, w2, best = L.width_at_coverage(pd.DataFrame(stuck), 0.9)
    assert c2 == np.inf and np.isnan(w2) and best <= 0.5

    def rows(method, ints):
        return [{"pool": "p", "metric": "AP", "method": method, "budget": 100, "width": r["hi"] - r["lo"],
                 "covered": r["lo"] <= r["truth"] <= r["hi"], **r} for r in ints]

    df = pd.DataFrame(rows("default/random", honest) + rows("vetted-only", stuck))
    text = "\n".join(L._equal_coverage_lines(df))
    assert "| 100 | - (" in text and "vetted-only never covers |" in text
    # centres three times nearer the truth: a third of the width at the same coverage, whatever
    # the widths as stated (0.4 here: it covers every time as it is, and is narrowed to 90%)
    sharp = [{"mean": 0.6 + d / 3, "lo": 0.4 + d / 3, "hi": 0.8 + d / 3, "truth": truth} for d in np.linspace(-0.15, 0.15, 20)]
    text = "\n".join(L._equal_coverage_lines(pd.DataFrame(rows("default/random", sharp) + rows("vetted-only", honest))))
    ratio = float(text.strip().splitlines()[-1].split("|")[-2])
    assert abs(ratio - 1 / 3) < 0.01


def test_label_efficiency_scores_an_honest_refusal_where_no_threshold_reaches_the_floor():
    """digits5_nb_prob's floor (0.6) is out of reach (its best threshold, the block of exact
    1.0s, has precision 0.35): "no threshold meets it" is then the right answer, not a miss."""
    sys.path.insert(0, str(BENCH))
    import label_efficiency as L
    import pandas as pd

    from real_scores import Pool

    y = np.r_[np.zeros(60), np.ones(35), np.zeros(65)].astype(int)  # the top 100 (score 1.0): 35% positive
    pool = Pool("p", np.r_[np.linspace(0, 0.5, 60), np.ones(100)], y, "probabilities", 0.5, 0.6, "")
    assert not L.floor_reachable(pool, [0.0, 0.25, 1.0], 10)
    assert L.floor_reachable(Pool(**{**pool.__dict__, "floor": 0.3}), [0.0, 0.25, 1.0], 10)
    assert L.floor_reachable(pool, [0.0, 0.25, 1.0], 10, floor=0.35) and not L.floor_reachable(pool, [1.0], 10, 0.36)
    assert not L.floor_reachable(Pool(**{**pool.__dict__, "floor": 0.3}), [0.0, 0.25, 1.0], 101)
    rows = pd.DataFrame({"met": [True, True, False, False, False], "covered": [True, False, np.nan, np.nan, np.nan],
                         "feasible": [True, True, False, True, np.nan]})
    right = L.threshold_right(rows)
    assert right.iloc[:4].tolist() == [1.0, 0.0, 1.0, 0.0] and np.isnan(right.iloc[4])
    tr = pd.DataFrame({"metric": "threshold_rule", "method": "default/random", "pool": "p", "budget": 30,
                       "met": [False] * 4, "covered": [np.nan] * 4, "feasible": [False] * 4,
                       "n_flagged": [100] * 4, "min_flagged": [18] * 4, "width": np.nan})
    ap = pd.DataFrame([{"pool": "p", "metric": "AP", "method": "default/random", "budget": 30, "width": 0.2,
                        "covered": True}] * 2)
    text = "\n".join(L._targets_lines(pd.concat([ap, tr], ignore_index=True)))
    assert "right in 1.00 of 4 (a refusal is right where no threshold reaches the floor: 4 such) | yes" in text
    assert "| default/random | 30 | 4 | 0.00 |  | 0.00 | 1.00 | 0 | 100 |" in "\n".join(L._threshold_lines(tr, ["default/random"]))


# ------------------------------------------------------------------ semisup.py


def test_semisup_report_keeps_only_complete_rounds_and_counts_the_paired_flips(tmp_path):
    import pandas as pd

    sys.path.insert(0, str(BENCH))
    import semisup

    rows = []
    for pool, sets in (("a", (0, 1)), ("b", (0,))):  # pool b stopped before its set 1
        for rep in sets:
            for model, covered in (("default", rep == 1), ("default + split", True)):
                rows.append({"pool": pool, "budget": 30, "set": rep, "model": model, "metric": "AP", "truth": 0.5,
                             "mean": 0.5, "lo": 0.4, "hi": 0.6, "width": 0.2, "covered": covered, "vo_width": 0.4,
                             "weights": ""})
    path = tmp_path / "rows.csv"
    semisup._write_csv(pd.DataFrame(rows), path, "`python benchmarks/semisup.py ...` with git abc")
    assert path.read_text().startswith("# `python benchmarks/semisup.py ...` with git abc\n")
    kept, dropped = semisup.complete_rounds(semisup.read_rows([path]))
    assert dropped == 1 and set(kept["set"]) == {0} and len(kept) == 4
    text = semisup.pools_table(kept)
    assert "covers where `default` does not in 2 of 2 intervals, the reverse in 0" in text
    assert "(1 label sets per pool, 2 pools)" in text
    # a joined run of another model with fewer sets: every model keeps only the sets all have
    more = [dict(r, model="default, intercept sd 5", covered=False) for r in rows if r["set"] == 0]
    more += [dict(r, pool="b", set=1) for r in rows if r["pool"] == "a" and r["set"] == 1]
    kept, dropped = semisup.complete_rounds(pd.DataFrame(rows + more))
    assert dropped == 1 and set(kept["set"]) == {0} and set(kept["model"]) == {"default", "default + split",
                                                                              "default, intercept sd 5"}
    assert "`default, intercept sd 5` covers where `default` does not in 0 of 2 intervals, the reverse in 0" \
        in semisup.pools_table(kept)


def test_semisup_regularized_weights_and_the_interval_score(tmp_path):
    """The Dirichlet-regularized stacking of ``--both`` and the interval score of the pools table."""
    import numpy as np
    import pandas as pd

    sys.path.insert(0, str(BENCH))
    import semisup
    from bayeval.models.stacking import _stacking_weights

    rng = np.random.default_rng(0)
    # candidate 0 predicts every label better: plain stacking gives it all the weight, the
    # Dirichlet(2) prior keeps the other one in, alpha = 1 is the plain stacking
    lpd = np.column_stack([np.full(30, -0.3), np.full(30, -0.6)]) + rng.normal(0, 0.01, (30, 1))
    plain = _stacking_weights(lpd)
    assert plain[0] == 1.0
    reg = semisup._regularized_weights(lpd, 2.0)
    assert 0.6 < reg[0] < 1.0 and abs(reg.sum() - 1) < 1e-12
    assert abs(semisup._regularized_weights(lpd, 1.0)[0] - 1.0) < 1e-3
    # equally good candidates: equal weights
    eq = semisup._regularized_weights(np.column_stack([np.full(30, -0.5)] * 3), 2.0)
    assert np.allclose(eq, 1 / 3, atol=1e-4)
    # the interval score: width + 20 x the miss distance (one interval covers, one misses by 0.1)
    rows = [{"pool": "a", "budget": 30, "set": 0, "model": "default", "metric": m, "truth": 0.5, "mean": 0.5,
             "lo": lo, "hi": hi, "width": hi - lo, "covered": lo <= 0.5 <= hi, "vo_width": 0.4, "weights": ""}
            for m, lo, hi in (("AP", 0.4, 0.6), ("recall", 0.6, 0.7))]
    text = semisup.pools_table(pd.DataFrame(rows))
    line = [row for row in text.splitlines() if row.startswith("| default")][0]
    assert "1.15" in line  # mean of 0.2 and 0.1 + 20 x 0.1
    assert "|                  1 |" in line  # one pool below 0.75


def test_semisup_default_rows_are_the_library_default():
    """The studies rebuild ``bayeval.fit``'s stack from candidate fits they share with other
    rows: the weights and the draws must be exactly those ``bayeval.fit`` makes."""
    import numpy as np

    sys.path.insert(0, str(BENCH))
    import semisup

    import bayeval as be
    from bayeval.models.stacking import default_candidates

    rng = np.random.default_rng(2)
    p = rng.beta(1, 3, 400)
    y = np.full(400, np.nan)
    y[:30] = rng.random(30) < p[:30]
    data = be.EvalData(p, y)
    direct = be.fit(data, random_seed=5, warn=False, draws=200, progressbar=False)
    big = be.fit(data, candidates=default_candidates(data), random_seed=5, warn=False, draws=200, progressbar=False)
    rebuilt = semisup.substack(big, data, list(big.candidates), 5)
    assert rebuilt.weights.to_dict() == direct.weights.to_dict()
    np.testing.assert_array_equal(rebuilt.metric("average_precision").values, direct.metric("average_precision").values)
    plain = semisup.substack(big, data, list(big.candidates), 5, how="plain")
    assert plain.weights.max() > direct.weights.max()  # 30 labels: the plain optimum is more extreme


# ------------------------------------------------------------------ compare.py


def test_compare_location_table_tells_a_pair_bias_from_too_narrow_intervals():
    """``location_table``: unbiased runs of the right width give z_mean ~ 0 and z_sd ~ 1; a
    per-pair shift raises z_sd and pair_bias_sd but not z_sd_within; intervals half as wide
    raise z_sd_within. ``reliability_reference`` is calibrated in the middle for an unbiased
    posterior, and moving it by the pairs' own errors (``pair_bias``) lowers the 0.7-0.9 bin."""
    sys.path.insert(0, str(BENCH))
    import pandas as pd

    import compare

    rng = np.random.default_rng(0)
    rows = []
    for k, (gap, shift) in enumerate([(0.02, 1.5), (0.05, -1.5), (0.1, 1.5), (-0.03, -1.5)]):
        for rep in range(400):
            sd = 0.05
            mean = gap + sd * rng.normal()
            rows.append({"route": "r", "pair": f"p{k}", "budget": 30, "rep": rep, "true_gap": gap, "kind": "sim",
                         "mean": mean, "lo": mean - 1.6449 * sd, "hi": mean + 1.6449 * sd, "shift": shift})
    df = pd.DataFrame(rows)
    df["p"] = 1 - __import__("scipy").stats.norm.cdf(-df["mean"] / 0.05)
    df = compare._finish(df)
    t = compare.location_table(df).iloc[0]
    assert abs(t["z_mean"]) < 0.1 and abs(t["z_sd"] - 1) < 0.06 and t["pair_bias_sd"] < 0.15
    biased = df.assign(mean=df["mean"] + 0.05 * df["shift"])
    t = compare.location_table(biased).iloc[0]
    assert t["z_sd"] > 1.5 and abs(t["z_sd_within"] - 1) < 0.06 and t["pair_bias_sd"] > 1.4
    narrow = df.assign(lo=df["mean"] - 1.6449 * 0.025, hi=df["mean"] + 1.6449 * 0.025)
    assert compare.location_table(narrow).iloc[0]["z_sd_within"] > 1.8
    ref = compare.reliability_reference(df, n_rep=20).reset_index()
    mid = ref[ref["bin"].astype(str) == "(0.7, 0.9]"].iloc[0]
    assert abs(mid["observed"] - mid["stated"]) < 0.05
    kept = compare.reliability_reference(biased, n_rep=20, pair_bias=True).reset_index()
    mid_b = kept[kept["bin"].astype(str) == "(0.7, 0.9]"].iloc[0]
    assert mid_b["observed"] < mid["observed"] - 0.1


def test_compare_counts_an_interval_ending_at_the_true_gap_as_covering_it():
    """A gap's posterior can hold a point mass at the true gap and end there: an end that
    differs from the true gap by rounding covers it, one off by 1e-6 does not; a true gap
    of 2e-16 is a tie (left out of mis-ranking)."""
    sys.path.insert(0, str(BENCH))
    import pandas as pd

    import compare

    g = 0.1 + 0.2 - 0.3 + 0.009378  # 0.009378 plus rounding
    df = compare._finish(pd.DataFrame({
        "true_gap": [0.009378, 0.009378, 0.009378, 2.220446e-16],
        "lo": [g, 0.009378 + 1e-6, -0.01, 0.001], "hi": [0.015, 0.015, 0.009378 - 1e-6, 0.003],
        "p": [0.9, 0.9, 0.1, 0.99]}))
    assert g != 0.009378
    assert df["covered"].tolist() == [True, False, False, False]
    assert df["true_gap"].iloc[3] == 0.0 and np.isnan(df["misranked"].iloc[3])
    assert df["misranked"].iloc[:3].tolist() == [0.0, 0.0, 1.0]


def test_compare_interval_score_and_the_table_by_vetted_positives():
    """The interval score is the width inside and width + 20 x the miss outside; runs are
    binned by their vetted positives, recomputed from the seeded label sets when a row has
    none (and then equal to the label set's count)."""
    sys.path.insert(0, str(BENCH))
    import pandas as pd

    import compare

    df = pd.DataFrame({"lo": [0.0, 0.0, 0.0], "hi": [1.0, 1.0, 1.0], "true_gap": [0.5, 1.5, -0.25]})
    np.testing.assert_allclose(compare.interval_score(df), [1.0, 11.0, 6.0])
    pair = compare.random_pairs(1)[0]
    rows = pd.DataFrame({"pair": pair.name, "budget": [30, 30, 100], "rep": [0, 1, 0], "route": "r",
                         "true_gap": pair.gap, "lo": -1.0, "hi": 1.0, "p": 0.6, "mean": 0.0})
    rows = compare.with_vetted_positives(compare._finish(rows), [pair])
    want = [int(np.nansum(compare._labels(pair, b, r))) for b, r in [(30, 0), (30, 1), (100, 0)]]
    assert rows["n_pos"].tolist() == want
    t = compare.positives_table(rows).reset_index()
    assert t["runs"].sum() == 3 and (t["coverage"] == 1.0).all() and (t["interval_score"] == 2.0).all()


def test_compare_random_pairs_time_limit_and_paired_labels():
    """``random_pairs`` is seeded and spreads the true gaps on both sides of 0; a route under
    ``_with_time_limit`` that overruns gives a row with no interval and ``timeout`` set (one
    that does not is passed through); ``compare_active.paired_table`` differences the labels
    of the same reps and counts which strategy needed fewer."""
    import time

    import pandas as pd

    sys.path.insert(0, str(BENCH))
    import compare
    import compare_active

    a, b = compare.random_pairs(12), compare.random_pairs(12)
    assert [p.name for p in a] == [p.name for p in b] and len({p.name for p in a}) == 12
    np.testing.assert_array_equal(a[3].a, b[3].a)
    gaps = [p.gap for p in a]
    assert min(gaps) < 0 < max(gaps)

    def slow(pair, lab, seed):
        time.sleep(3)
        return {"p": 0.5, "mean": 0.0, "lo": -1.0, "hi": 1.0}

    r = compare._with_time_limit(slow, 1)(a[0], None, 0)
    assert r["timeout"] is True and np.isnan(r["lo"]) and np.isnan(r["p"])
    r = compare._with_time_limit(lambda pair, lab, seed: {"p": 0.7, "mean": 0.1, "lo": -0.1, "hi": 0.3}, 5)(a[0], None, 0)
    assert r == {"p": 0.7, "mean": 0.1, "lo": -0.1, "hi": 0.3, "timeout": False}

    df = pd.DataFrame([{"strategy": s, "rep": rep, "labels": n, "decided": n < 300, "right": True}
                       for rep, ns in enumerate([(40, 60, 300), (60, 60, 300), (80, 40, 120)])
                       for s, n in zip(("active", "disagreement", "random"), ns, strict=True)])
    t = compare_active.paired_table(df, against="disagreement")
    assert t.loc["active", "mean_extra_labels"] == pytest.approx((-20 + 0 + 40) / 3, abs=0.01)
    assert (t.loc["active", "disagreement_fewer"], t.loc["active", "tie"], t.loc["active", "other_fewer"]) == (1, 1, 1)
    assert t.loc["random", "mean_extra_labels"] == pytest.approx((240 + 240 + 80) / 3, abs=0.01)
    tab = compare_active.active_table(df)
    assert tab.loc["random", "decided"] == pytest.approx(1 / 3, abs=1e-3)


def test_semisup_report_takes_a_rerun_row_from_the_later_file_and_keeps_the_models_asked(tmp_path):
    import pandas as pd

    sys.path.insert(0, str(BENCH))
    import semisup

    def row(model, covered, rep=0):
        return {"pool": "a", "budget": 30, "set": rep, "model": model, "metric": "AP", "truth": 0.5, "mean": 0.5,
                "lo": 0.4, "hi": 0.6, "width": 0.2, "covered": covered, "vo_width": 0.4, "weights": ""}

    old, new = tmp_path / "old.csv", tmp_path / "new.csv"
    semisup._write_csv(pd.DataFrame([row("default", False), row("default", True, 1), row("default + split", True)]),
                       old, "old run")
    semisup._write_csv(pd.DataFrame([row("default", True), row("default + flat", True)]), new, "rerun")
    got = semisup.read_rows([old, new]).set_index(["set", "model"])["covered"]
    assert len(got) == 4 and bool(got[(0, "default")]) and bool(got[(1, "default")])  # set 0 from the rerun
    got = semisup.read_rows([old, new], models=["default", "default + flat"])
    assert set(got["model"]) == {"default", "default + flat"} and len(got) == 3


def test_compare_one_set_separation_tells_a_separating_classifier_and_counts_confident_errors():
    sys.path.insert(0, str(BENCH))
    import compare
    import compare_one_set

    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.3).astype(int)
    a = np.where(y == 1, rng.uniform(0.6, 0.9, 300), rng.uniform(0.1, 0.4, 300))  # separates every label set
    b = np.where(y == 1, 1.0, 1e-9)  # saturated, and confidently wrong on every item below
    b[np.flatnonzero(y == 0)[:100]] = 1.0
    pair = compare.Pair("toy", a, b, y, "toy")
    rows = compare_one_set.separation(pair, budgets=(40,), sets=(0,)).splitlines()[2].split("|")
    lab = compare._labels(pair, 40, 0)
    vetted = ~np.isnan(lab)
    assert rows[4].strip().startswith("yes") and rows[5].strip().startswith("no")
    assert int(rows[6]) == int((vetted & (y == 0) & (b == 1.0)).sum()) > 0


def test_compare_shrinkage_cell_model_keeps_vetted_labels_and_draws_the_rest():
    """The cell models of ``compare_shrinkage.py``: with every item vetted every draw's gap is
    the true gap (the vetted labels are kept); with a quarter vetted the draws vary around a
    positive gap (a pool where B is A reversed)."""
    sys.path.insert(0, str(BENCH))
    from types import SimpleNamespace

    import compare_shrinkage as S

    rng = np.random.default_rng(0)
    y = rng.random(400) < 0.3
    a = y + rng.normal(0, 0.7, 400)
    pair = SimpleNamespace(a=a, b=-a + rng.normal(0, 0.01, 400), truth=y.astype(int), name="p")
    from bayeval.core import metrics as M

    gap = float(M.average_precision(y[None].astype(np.int8), a)[0] - M.average_precision(y[None].astype(np.int8), pair.b)[0])
    every = S.cell_gap(pair, np.ones(400, bool), 4, 0, n_draws=20)
    np.testing.assert_allclose(every, gap, rtol=0, atol=1e-12)
    some = S.cell_gap(pair, S._vetted(400, 0.25, 0), 4, 0, n_draws=200)
    assert some.std() > 0.005 and gap > 0 and 0 < some.mean() < 2 * gap
    assert S._vetted(400, 0.25, 0).sum() == 100


def test_pk_guard_interval_counts_vetted_top_items_and_bounds_the_rest_by_the_labels_below():
    """The monotone-only P@K guard: a fully vetted top K is its share exactly; unvetted top
    items are bounded below by the vetted items under the top K (all positive: a high lower
    end; all negative: a lower end near the vetted share) and above by 1."""
    sys.path.insert(0, str(BENCH))
    import pk_guard

    s = np.arange(100, 0, -1, dtype=float)  # item i has the (i+1)-th highest score
    y = np.full(100, np.nan)
    y[:5] = [1, 0, 1, 1, 1]
    assert pk_guard.guard_interval(s, y, 5) == (0.8, 0.8)
    y = np.full(100, np.nan)
    y[0] = 0  # one vetted negative in the top 5; four unvetted
    y[10:20] = 1
    lo_pos, hi = pk_guard.guard_interval(s, y, 5)
    assert hi == 0.8  # every unvetted item positive, the vetted negative not
    assert 0.45 <= lo_pos <= 0.8  # Beta(10.5, 0.5)'s lower tail: 4 unvetted mostly positive
    y[10:20] = 0
    lo_neg, _ = pk_guard.guard_interval(s, y, 5)
    assert lo_neg == 0.0 and lo_pos > lo_neg
    # the block is the m highest vetted items below the top K, not any vetted items
    y[10:20] = 1
    y[30:40] = 0
    assert pk_guard.guard_interval(s, y, 5, m=10) == (lo_pos, hi)
    assert pk_guard.guard_interval(s, y, 5, m=20)[0] < lo_pos
