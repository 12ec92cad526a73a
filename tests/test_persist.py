"""Keep a fit: bayeval.save(post, path) / bayeval.load(path), post.to_inference_data(metrics).

A reloaded posterior must give the same label draws -- hence the same metric draws,
exactly -- as the one that was saved, for every model, without sampling again.
"""

from __future__ import annotations

import copy
import json
import math
import pickle
import warnings

import arviz as az
import h5netcdf
import h5py
import numpy as np
import pandas as pd
import pytest
from _fit_cases import annotations as _annotations
from _fit_cases import scores as _scores
from _fit_cases import tags as _tags

import bayeval as be
from bayeval import EvalData, Posterior, persist
from bayeval.annotators import AnnotatorError
from bayeval.core import model as _base
from bayeval.core import sampling as _sampling
from bayeval.core.model import Model
from bayeval.models import Calibration, LabelFlip, ScoreMixture, Stack
from bayeval.persist import _decode, _encode
from bayeval.rankings import HumanRanking, PairwiseVotes, RankingPosterior

FIT = dict(draws=50, tune=50, chains=2, progressbar=False, warn=False, cores=1, random_seed=3)


def _votes(seed=0):
    rng = np.random.default_rng(seed)
    v = (rng.random((12, 5)) < rng.uniform(0.2, 0.9, (12, 1))).astype(float)
    v[0, 0], v[1, 1] = -1, np.nan
    conf = np.where(np.isin(v, [0, 1]), rng.integers(0, 3, v.shape), np.nan)
    frame = pd.DataFrame(v, index=[f"pair{j}" for j in range(12)], columns=list("abcde"))
    return PairwiseVotes(frame, pd.DataFrame(conf, index=frame.index, columns=frame.columns))


CASES = {
    "ScoreMixture": (lambda: ScoreMixture(negative="gamma", positive="truncnormal", prior_pi=(2, 3)), _scores),
    "Calibration": (lambda: Calibration("logistic", transform="logit"), _scores),
    "Calibration-monotone": (lambda: Calibration("monotone"), _scores),
    "LabelFlip": (lambda: LabelFlip(feature_names=None), _tags),
    "AnnotatorError": (lambda: AnnotatorError(n_nodes=5, model_accuracy=(4.0, 1.0)), _annotations),
    "AnnotatorError-3": (lambda: AnnotatorError(3, n_nodes=5), lambda: _annotations(k=3)),
    "HumanRanking": (lambda: HumanRanking(mapping=(0.5, 0.7, 0.9), theta_prior=(1.0, 1.0)), _votes),
    "Stack": (lambda: Stack([Calibration("logistic"), ScoreMixture("gamma", "truncnormal")]), _scores),
}


def _draws(post):
    """What must be identical after a reload: metric draws (theta for rankings)."""
    if isinstance(post, RankingPosterior):
        return {"theta": post.theta.values, "percentile": post.percentile(np.ones(post.theta.sizes["pair"])).values}
    if post.model == "annotator error":
        return {"accuracy": post.metric("accuracy").values}
    return {"average_precision": post.metric("average_precision").values,
            "precision_at_k": post.metric("precision_at_k", k=[5, 20]).values}


def _same(a, b) -> bool:
    """Equality that treats NaN as equal to NaN (JSON-able values)."""
    return json.dumps(_encode(a, "a"), sort_keys=True) == json.dumps(_encode(b, "b"), sort_keys=True)


@pytest.fixture(scope="module")
def fits():
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, (make, data) in CASES.items():
            out[name] = make().fit(data(), **FIT)
    return out


@pytest.fixture()
def no_sampling(monkeypatch):
    """Any attempt to sample raises: loading must not sample."""
    import pymc as pm

    def boom(*args, **kwargs):
        raise AssertionError("sampling happened")

    monkeypatch.setattr(_sampling, "sample_model", boom)
    monkeypatch.setattr(_base, "sample_model", boom)
    monkeypatch.setattr(pm, "sample", boom)


@pytest.mark.parametrize("name", list(CASES))
def test_a_reloaded_fit_gives_identical_draws(name, fits, tmp_path, no_sampling):
    post = fits[name]
    before = _draws(post)
    path = be.save(post, tmp_path / "fit.nc")
    again = be.load(path)
    assert type(again) is type(post)
    after = _draws(again)
    for key in before:
        assert before[key].shape == after[key].shape
        np.testing.assert_array_equal(before[key], after[key], err_msg=f"{name}: {key}")
    # the model, how it was sampled, its diagnostics and its seed travel with it
    assert type(again.model_spec) is type(post.model_spec)
    assert _same(again.model_spec.get_params(), post.model_spec.get_params())
    assert _same(again.convergence, post.convergence)
    assert (again.sampling is None) == (post.sampling is None)
    if post.sampling is not None:
        assert _same(vars(again.sampling), vars(post.sampling))
    assert getattr(again, "random_seed", None) == getattr(post, "random_seed", None)
    assert sorted(again.idata.groups()) == sorted(post.idata.groups())
    assert again.idata.posterior.equals(post.idata.posterior)
    assert again.idata.log_likelihood.equals(post.idata.log_likelihood)
    assert not set(vars(post)) - set(vars(again)), "attributes of the fit missing after load"


def test_a_stack_says_how_each_candidate_was_sampled_where_the_guide_says(fits, tmp_path, no_sampling):
    """docs/guide.md said the saved file records "how it was sampled (`post.sampling`)", which is
    None for a stack of several candidates: the guide now points to each candidate's sampling."""
    from pathlib import Path

    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text(encoding="utf-8")
    flat = " ".join(guide[guide.index("## Keep a fit"):].split())
    assert "its own `post.sampling` is None" in flat and "`post.candidates[name].sampling`" in flat
    post = fits["Stack"]
    assert len(post.candidates) == 2 and post.sampling is None
    again = be.load(be.save(post, tmp_path / "stack.nc"))
    assert again.sampling is None and again.sampler == post.sampler
    for name, cand in post.candidates.items():
        assert isinstance(cand.sampling, _sampling.SamplingInfo) and cand.sampling.sampler in post.sampler
        assert _same(vars(again.candidates[name].sampling), vars(cand.sampling))


@pytest.mark.parametrize("name", ["AnnotatorError", "HumanRanking", "LabelFlip"])
def test_the_data_container_travels(name, fits, tmp_path):
    post = fits[name]
    again = be.load(be.save(post, tmp_path / "fit.nc"))
    if name == "HumanRanking":
        a, b = post.data, again.data
        pd.testing.assert_frame_equal(b.votes, a.votes)
        pd.testing.assert_frame_equal(b.confidence, a.confidence.astype(float))
        np.testing.assert_array_equal(again.pair_labels, post.pair_labels)
        return
    for field in ("scores", "labels", "noisy_labels", "predictions", "category_codes", "category_names",
                  "features", "feature_names", "item_ids"):
        a, b = getattr(post.data, field), getattr(again.data, field)
        if a is None:
            assert b is None, field
        else:
            assert a.dtype == b.dtype, field
            np.testing.assert_array_equal(a, b, err_msg=field)
    if name == "AnnotatorError":
        np.testing.assert_array_equal(again._observed.annotator_names, ["ann_a", "ann_b"])
        np.testing.assert_array_equal(again._observed.annotations, post._observed.annotations)
        assert again.gold_check == post.gold_check


def test_a_stack_keeps_each_candidate_fit(fits, tmp_path):
    post = fits["Stack"]
    again = be.load(be.save(post, tmp_path / "fit.nc"))
    assert list(again.candidates) == list(post.candidates)
    for name, cand in post.candidates.items():
        other = again.candidates[name]
        assert type(other) is type(cand) and other.idata.posterior.equals(cand.idata.posterior)
        np.testing.assert_array_equal(other.metric("average_precision"), cand.metric("average_precision"))
    pd.testing.assert_frame_equal(again.comparison, post.comparison)
    assert again.comparison.attrs["errors"] == post.comparison.attrs["errors"]
    assert isinstance(again.model_spec, Stack) and len(again.model_spec.candidates) == 2
    # ArviZ reads the file, and one candidate's fit from its group
    idata = az.from_netcdf(tmp_path / "fit.nc")
    assert {"posterior", "log_likelihood"} <= set(idata.groups())
    cand = az.InferenceData.from_netcdf(str(tmp_path / "fit.nc"), base_group="bayeval_candidates/c0")
    assert cand.posterior.equals(post.candidates[list(post.candidates)[0]].idata.posterior)


@pytest.mark.parametrize("seed", [5, None])
@pytest.mark.parametrize("two_d", [False, True])
def test_plug_in_posteriors_store_their_probabilities(seed, two_d, tmp_path):
    rng = np.random.default_rng(1)
    n = 40
    data = EvalData(rng.random(n), np.r_[rng.integers(0, 2, 8), np.full(n - 8, np.nan)],
                    categories=rng.choice(["x", "y", "z"], n), features=rng.normal(size=(n, 2)),
                    predictions=rng.integers(0, 2, n), noisy_labels=rng.integers(0, 2, n))
    p = rng.random((30, n)) if two_d else rng.random(n)
    post = Posterior.from_probabilities(data, p, draws=30, chains=2, random_seed=seed, check=False)
    again = be.load(be.save(post, tmp_path / "p.nc"))
    for metric in ("average_precision", "accuracy"):
        np.testing.assert_array_equal(again.metric(metric, threshold=0.5 if metric == "accuracy" else None),
                                      post.metric(metric, threshold=0.5 if metric == "accuracy" else None))
    np.testing.assert_array_equal(again.data.categories, post.data.categories)
    np.testing.assert_array_equal(again.data.feature_names, post.data.feature_names)
    assert again.random_seed == seed and again.model == "given probabilities"


def test_refuses_to_overwrite_and_to_save_what_it_cannot_rebuild(fits, tmp_path):
    post = fits["Calibration"]
    path = be.save(post, tmp_path / "fit.nc")
    with pytest.raises(FileExistsError, match="overwrite=True"):
        be.save(post, path)
    be.save(fits["Calibration-monotone"], path, overwrite=True)
    assert be.load(path).model_spec.curve == "monotone"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        be.save(post, tmp_path / "no" / "such" / "fit.nc")
    hand_made = Posterior(post.data, post.idata, lambda params: np.full(post.data.n_items, 0.5))
    with pytest.raises(ValueError, match="model_spec"):
        be.save(hand_made, tmp_path / "hand.nc")
    assert not (tmp_path / "hand.nc").exists() and len(list(tmp_path.iterdir())) == 1  # no temporary file left
    votes = np.array([[1, 1, 0], [0, 0, 1]])
    from_draws = RankingPosterior.from_draws(np.full((1, 5, 2), 0.5), votes)
    with pytest.raises(ValueError, match="model_spec"):
        be.save(from_draws, tmp_path / "r.nc")


def test_bad_files_give_clear_errors(fits, tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.nc"):
        be.load(tmp_path / "nope.nc")
    text = tmp_path / "notes.nc"
    text.write_text("hello")
    with pytest.raises(ValueError, match=r"notes\.nc is not a bayeval fit: it is not a netCDF4/HDF5 file"):
        be.load(text)
    plain = tmp_path / "plain.nc"
    fits["Calibration"].idata.to_netcdf(str(plain))
    with pytest.raises(ValueError, match=r"plain\.nc is not a bayeval fit: .*bayeval_format.*arviz.from_netcdf"):
        be.load(plain)
    # a bayeval file that lost its data group
    path = be.save(fits["Calibration"], tmp_path / "fit.nc")
    with h5py.File(path, "a") as f:
        del f["bayeval_data"]
    with pytest.raises(ValueError, match=r"fit\.nc is not a complete bayeval fit: it lacks \['bayeval_data'\]"):
        be.load(path)


def _small_saved_fit(path):
    rng = np.random.default_rng(3)
    s = rng.random(400)
    labels = np.where(np.arange(400) < 40, (s > 0.5).astype(float), np.nan)
    post = Posterior.from_probabilities(EvalData(s, labels), s, draws=200, chains=2, random_seed=0, check=False)
    return post, be.save(post, path)


def _refused_as_damaged(bad):
    with pytest.raises(persist.DamagedFitError) as info:
        be.load(bad)
    msg = str(info.value)
    assert msg.startswith(f"{bad} is a damaged or truncated bayeval fit (")
    assert "save the fit again" in msg and "bayeval.save(post, path)" in msg
    assert isinstance(info.value, ValueError)  # the CLI's handler and callers catching ValueError still catch it


def test_a_truncated_saved_fit_is_refused_at_load_naming_the_file(tmp_path):
    _, good = _small_saved_fit(tmp_path / "fit.nc")
    raw = good.read_bytes()
    bad = tmp_path / "half.nc"
    bad.write_bytes(raw[: len(raw) // 2])  # a copy that stopped half way (head -c)
    _refused_as_damaged(bad)


def test_a_saved_fit_with_flipped_bytes_is_refused_at_load_or_loads_unchanged(tmp_path):
    post, good = _small_saved_fit(tmp_path / "fit.nc")
    raw = good.read_bytes()
    refused = 0
    for frac in np.arange(0.05, 1.0, 0.1):  # 2,000 bytes flipped at ten places through the file
        b = bytearray(raw)
        at = int(len(b) * frac)
        b[at : at + 2000] = bytes(x ^ 0xFF for x in b[at : at + 2000])
        bad = tmp_path / f"flip{at}.nc"
        bad.write_bytes(bytes(b))
        try:
            again = be.load(bad)
        except persist.DamagedFitError:
            _refused_as_damaged(bad)
            refused += 1
        else:  # the flipped bytes were free space: what loads is the saved fit
            assert again.idata.posterior.equals(post.idata.posterior)
    assert refused >= 5


def _flipped_copies(path, needle: bytes, tmp_path):
    """Copies of ``path`` with one byte of each place ``needle`` is stored changed (``needle``'s 3rd byte XOR 1)."""
    raw = path.read_bytes()
    at = [i for i in range(len(raw)) if raw.startswith(needle, i)]
    assert at, f"{needle!r} is not stored as such in {path}"
    for n, i in enumerate(at):
        b = bytearray(raw)
        b[i + 2] ^= 1
        bad = tmp_path / f"flipped{n}.nc"
        bad.write_bytes(bytes(b))
        yield bad


def test_a_byte_changed_in_a_stored_string_array_or_attribute_is_refused_at_load(tmp_path):
    """Numbers are stored deflated (their zlib checksum catches a changed byte), but strings
    (item ids, category and pair names: variable-length strings, which HDF5 filters cannot
    cover) and the attributes (model parameters, seed) are stored as they are: a changed byte
    loaded as a changed fit without an error. The file's SHA-256 now catches it."""
    rng = np.random.default_rng(3)
    s = rng.random(60)
    labels = np.where(np.arange(60) < 20, (s > 0.5).astype(float), np.nan)
    data = EvalData(s, labels, item_ids=[f"case-{i:04d}" for i in range(60)])
    post = Posterior.from_probabilities(data, s, draws=40, chains=2, random_seed=20261128, check=False)
    path = be.save(post, tmp_path / "fit.nc")
    assert be.load(path).data.item_ids[17] == "case-0017"
    for needle in (b"case-0017", b"20261128"):  # an item id in bayeval_data/ids; the seed's attribute
        for bad in _flipped_copies(path, needle, tmp_path):
            _refused_as_damaged(bad)
            assert "do not match the SHA-256 checksum recorded when it was saved" in str(
                pytest.raises(persist.DamagedFitError, be.load, bad).value)


def test_a_fit_saved_without_a_checksum_still_loads(tmp_path):
    """Files saved before bayeval kept a checksum (bayeval.save without its last step) load as before."""
    post, _ = _small_saved_fit(tmp_path / "new.nc")
    old = tmp_path / "old.nc"
    persist._write(post, str(old), "/", first=True)  # what save wrote before the checksum
    with h5netcdf.File(old, "r") as f:
        assert persist.CHECKSUM not in f.attrs
    again = be.load(old)
    assert again.idata.posterior.equals(post.idata.posterior)
    np.testing.assert_array_equal(again.metric("average_precision"), post.metric("average_precision"))
    with h5netcdf.File(tmp_path / "new.nc", "r") as f:  # and what save writes now carries one
        assert f.attrs[persist.CHECKSUM] == persist._file_digest(str(tmp_path / "new.nc"))


def test_load_only_builds_bayeval_models(fits, tmp_path):
    path = be.save(fits["Calibration"], tmp_path / "fit.nc")
    with h5netcdf.File(path, "a") as f:
        f.attrs["bayeval_model_class"] = "subprocess:Popen"
    persist._seal(str(path))  # a checksum that matches: the class itself must be refused
    with pytest.raises(ValueError, match="'subprocess:Popen' is not a bayeval model class"):
        be.load(path)


@pytest.mark.parametrize(
    ("name", "old"),
    [
        ("HumanRanking", "bayeval.models.human_ranking:HumanRanking"),
        ("AnnotatorError", "bayeval.models.annotator:AnnotatorError"),
        ("Calibration", "bayeval.models.calibration:Calibration"),
    ],
)
def test_files_that_name_former_module_paths_still_load(name, old, fits, tmp_path, no_sampling):
    """A fit saved by an earlier bayeval names the classes by the module paths of then
    (HumanRanking in bayeval.models.human_ranking, the posterior in bayeval.posterior, a
    nested model's class in bayeval.models._base's time...): loading maps them."""
    post = fits[name]
    path = be.save(post, tmp_path / "old.nc")
    with h5netcdf.File(path, "a") as f:
        assert f.attrs["bayeval_model_class"] != old or name == "Calibration"
        f.attrs["bayeval_model_class"] = old
        f.attrs["bayeval_posterior_class"] = "bayeval.posterior:Posterior"
        del f.attrs[persist.CHECKSUM]  # files of then had no checksum
    again = be.load(path)
    assert type(again) is type(post) and type(again.model_spec) is type(post.model_spec)
    assert again.idata.posterior.equals(post.idata.posterior)
    assert persist.MOVED_MODULES["bayeval.models._base"] == "bayeval.core.model"
    assert persist._model_class("bayeval.models._base:Model") is Model  # the contract, where it lived then
    with pytest.raises(ValueError, match="'bayeval.no_such_module:X' cannot be imported"):
        persist._model_class("bayeval.no_such_module:X")


def test_saved_files_carry_the_provenance_record(fits, tmp_path):
    from bayeval._version import dependency_versions

    post = fits["Calibration"]
    path = be.save(post, tmp_path / "fit.nc")
    attrs = az.from_netcdf(path).attrs
    record = json.loads(attrs["bayeval_provenance"])
    assert json.loads(attrs["bayeval_versions"]) == record["versions"] == dependency_versions()
    assert record["data_sha256"] == post.data.fingerprint() and len(record["date"]) == 10
    assert set(record["versions"]) == {"bayeval", "pymc", "pytensor", "numpy", "arviz", "xarray"}


def test_parameters_round_trip_through_json():
    params = {"t": (1.0, 2.0), "nested": [(1, "a"), None], "inf": float("inf"), "arr": np.arange(3),
              "model": Calibration("beta"), "__odd": {"__tuple__": 1}}
    back = _decode(json.loads(json.dumps(_encode(params, "params"))))
    assert back["t"] == (1.0, 2.0) and back["nested"] == [(1, "a"), None] and math.isinf(back["inf"])
    assert back["arr"].dtype == params["arr"].dtype and back["model"].curve == "beta"
    assert back["__odd"] == {"__tuple__": 1}
    with pytest.raises(TypeError, match=r"params\['f'\] is a function"):
        _encode({"f": lambda x: x}, "params")


def test_to_inference_data_adds_the_metrics_group(fits, tmp_path):
    post = fits["Calibration"]
    groups = list(post.idata.groups())
    idata = post.to_inference_data(
        ["average_precision", ("precision_at_k", {"k": 10}), ("precision_at_k", {"k": [5, 20]}),
         ("recall_at_k", {"k": [10, 20, 50]})],
    )
    assert list(post.idata.groups()) == groups  # a copy: the posterior's own idata is unchanged
    m = idata.metrics
    assert list(m.data_vars) == ["average_precision", "precision_at_k[k=10]", "precision_at_k[k=[5, 20]]",
                                 "recall_at_k"]
    np.testing.assert_array_equal(m["average_precision"], post.metric("average_precision"))
    np.testing.assert_array_equal(m["precision_at_k[k=[5, 20]]"], post.metric("precision_at_k", k=[5, 20]))
    # a dim of the same name with other coordinates is renamed, not silently aligned
    assert m["precision_at_k[k=[5, 20]]"].dims == ("chain", "draw", "k")
    assert m["recall_at_k"].dims == ("chain", "draw", "recall_at_k_k")
    np.testing.assert_array_equal(m["recall_at_k"], post.metric("recall_at_k", k=[10, 20, 50]))
    assert az.summary(idata, group="metrics", kind="stats").shape[0] == 1 + 1 + 2 + 3
    idata.to_netcdf(str(tmp_path / "with_metrics.nc"))
    assert "metrics" in az.from_netcdf(tmp_path / "with_metrics.nc").groups()
    with pytest.raises(ValueError, match="more than once"):
        post.to_inference_data(["roc_auc", "roc_auc"])


def test_to_inference_data_passes_metric_options(fits):
    post = fits["LabelFlip"]
    idata = post.to_inference_data({"ap": "average_precision"}, category="mean")
    assert idata.metrics["ap"].dims == ("chain", "draw")
    np.testing.assert_array_equal(idata.metrics["ap"], post.metric("average_precision", category="mean"))
    each = post.to_inference_data({"ap": "average_precision"})
    assert each.metrics["ap"].dims == ("chain", "draw", "category")


def test_report_from_a_saved_fit_equals_the_original(fits, tmp_path, no_sampling):
    from bayeval.report import report

    post = fits["Stack"]
    again = be.load(be.save(post, tmp_path / "fit.nc"))
    kw = dict(title="t", metrics=["average_precision", ("precision_at_k", {"k": 10})],
              constraints={"min_precision": 0.6})
    a, b = report(post, **kw), report(again, **kw)
    assert sorted(a.tables) == sorted(b.tables)
    for key in a.tables:
        pd.testing.assert_frame_equal(a.tables[key], b.tables[key])


# ------------------------------------------------------------------------------ CLI

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
BC = ROOT / "models" / "breast_cancer_logreg"
FAST = ["--draws", "150", "--tune", "150", "--chains", "2", "--no-progress"]


def _tables(md: str) -> list[str]:
    """The table rows of a Markdown report (the numbers), without the provenance line."""
    return [line for line in md.splitlines() if line.startswith("|")]


def test_cli_report_from_a_saved_fit_equals_the_fitted_report(tmp_path, monkeypatch, capsys):
    from bayeval.cli import main

    fit = tmp_path / "bc.nc"
    assert main(["report", str(BC), "--out", str(tmp_path / "r1"), *FAST, "--save", str(fit), "--quiet"]) == 0
    assert fit.exists() and "fit saved" in capsys.readouterr().err
    # no sampling from here on
    import pymc as pm

    def boom(*args, **kwargs):
        raise AssertionError("sampling happened")

    monkeypatch.setattr(_sampling, "sample_model", boom)
    monkeypatch.setattr(_base, "sample_model", boom)
    monkeypatch.setattr(pm, "sample", boom)
    assert main(["report", str(BC), "--out", str(tmp_path / "r2"), "--from-fit", str(fit), "--quiet"]) == 0
    first = (tmp_path / "r1" / "report.md").read_text()
    second = (tmp_path / "r2" / "report.md").read_text()
    assert len(_tables(first)) > 10
    assert _tables(first) == _tables(second)


def test_cli_fit_save_writes_a_loadable_fit(tmp_path, capsys):
    from bayeval.cli import main

    rng = np.random.default_rng(0)
    y = (rng.random(200) < 0.3).astype(int)
    s = np.where(y == 1, rng.gamma(8, 0.1, 200), rng.gamma(2, 0.1, 200))
    lab = np.where(np.arange(200) < 40, y, np.nan)
    csv = tmp_path / "scores.csv"
    pd.DataFrame({"s": s, "y": lab}).to_csv(csv, index=False)
    fit = tmp_path / "fit.nc"
    args = ["fit", str(csv), "--score", "s", "--label", "y", "--metric", "average_precision", *FAST]
    assert main([*args, "--save", str(fit)]) == 0
    printed = capsys.readouterr().out
    post = be.load(fit)
    mean = float(post.summary(["average_precision"], hdi_prob=0.9)["mean"].iloc[0])
    assert f"{mean:.4f}" in printed
    # an existing file is kept unless --overwrite
    assert main([*args, "--save", str(fit)]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main([*args, "--save", str(fit), "--overwrite", "--draws", "60"]) == 0
    assert be.load(fit).n_draws == 60


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--from-fit", "{tmp}/missing.nc"], "no such file"),
        (["--from-fit", "{fit}", "--draws", "10"], "--from-fit does not sample"),
        (["--from-fit", "{fit}", "--save", "{tmp}/x.nc"], "give one of them"),
        (["--from-fit", "{other}"], "made on other data"),
        (["--from-fit", "{text}"], "is not a bayeval fit"),
    ],
)
def test_cli_from_fit_errors_are_one_clear_line(extra, message, fits, tmp_path, capsys):
    from bayeval.cli import main

    other = be.save(fits["Calibration"], tmp_path / "other.nc")
    text = tmp_path / "text.nc"
    text.write_text("not a fit")
    names = {"tmp": tmp_path, "fit": other, "other": other, "text": text}
    argv = ["report", str(BC), "--out", str(tmp_path / "r"), "--quiet"] + [a.format(**names) for a in extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("bayeval: error:") and message in err, err


@pytest.mark.parametrize("name", ["Stack", "AnnotatorError"])
def test_a_reloaded_fit_saves_and_loads_again(name, fits, tmp_path):
    post = fits[name]
    once = be.load(be.save(post, tmp_path / "a.nc"))
    twice = be.load(be.save(once, tmp_path / "b.nc"))
    np.testing.assert_array_equal(_draws(twice)[next(iter(_draws(post)))], _draws(post)[next(iter(_draws(post)))])
    assert twice.idata.posterior.equals(post.idata.posterior)
    assert "load" in be.__all__


def test_a_stack_with_a_failed_candidate_keeps_its_error(tmp_path):
    rng = np.random.default_rng(0)
    y = (rng.random(200) < 0.3).astype(float)
    data = EvalData(rng.normal(2 * y, 1.0), np.where(np.arange(200) < 40, y, np.nan))  # margins: no Beta curve
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        post = Stack([Calibration("logistic"), Calibration("beta")]).fit(data, draws=50, random_seed=1)
    assert list(post.candidates) == ["calibration/logistic"] and "calibration/beta" in post.comparison.index
    again = be.load(be.save(post, tmp_path / "fit.nc"))
    pd.testing.assert_frame_equal(again.comparison, post.comparison)
    assert again.comparison.attrs["errors"] == post.comparison.attrs["errors"] != {}
    np.testing.assert_array_equal(again.metric("average_precision"), post.metric("average_precision"))


def test_votes_with_integer_columns_and_no_frame_travel(tmp_path):
    rng = np.random.default_rng(2)
    v = (rng.random((8, 4)) < 0.7).astype(float)
    for votes in (v, pd.DataFrame(v, index=np.arange(10, 18), columns=[3, 5, 7, 9])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            post = HumanRanking().fit(PairwiseVotes(votes), **FIT)
        again = be.load(be.save(post, tmp_path / "r.nc", overwrite=True))
        assert type(again.data.votes) is type(votes)
        if isinstance(votes, pd.DataFrame):
            pd.testing.assert_frame_equal(again.data.votes, votes)
        np.testing.assert_array_equal(again.pair_labels, post.pair_labels)
        np.testing.assert_array_equal(again.theta, post.theta)


def test_cli_from_fit_refuses_a_fit_of_another_model(tmp_path, capsys):
    from bayeval.cards import load_card
    from bayeval.cli import main

    data, _ = load_card(BC).load_data()
    fit = be.save(Calibration("logistic").fit(data, **FIT), tmp_path / "logistic.nc")
    assert main(["report", str(BC), "--out", str(tmp_path / "r"), "--quiet", "--from-fit", str(fit)]) == 2
    err = capsys.readouterr().err
    assert "is not the card's" in err and "Calibration(curve='logistic'" in err and "Stack(" in err


def test_a_fit_saved_before_a_parameter_existed_reloads_with_the_value_it_was_made_with():
    """JointCalibration gained ``weights`` (signed by default), then ``intercept_sd`` (5) and
    ``slope_sd``; a file written before each holds only the older parameters, and its model
    must come back as the simplex, intercept-sd-1 model that drew it, not today's default."""
    from bayeval.models.joint import JointCalibration
    from bayeval.persist import _make_model

    spec = "bayeval.models.joint:JointCalibration"
    old = _make_model(spec, {"curve": "logistic"})
    assert (old.weights, old.intercept_sd, old.slope_sd) == ("simplex", 1.0, 1.0)
    # what today's save writes comes back as it was (the former defaults only fill gaps)
    now = JointCalibration("monotone", intercept_sd=2.5)
    again = _decode(_encode(now, "m"))
    assert again.get_params() == now.get_params() and again.intercept_sd == 2.5 and again.weights == "signed"
    # Calibration gained intercept_sd and slope_sd: an older file's curve keeps the priors it was drawn with
    one = _make_model("bayeval.models.calibration:Calibration", {"curve": "monotone", "transform": "auto"})
    assert (one.intercept_sd, one.slope_sd, one.asymptotes) == (None, 1.0, False)
    # ... and saturated: an older file's exact 0s and 1s keep the feature its draws were made on
    assert one.saturated == "merged" and old.saturated == "merged"
    assert _make_model("bayeval.models.mixture_calibration:MixtureCalibration", {"form": "split"}).saturated == "merged"
    assert _decode(_encode(Calibration("monotone"), "m")).saturated == "apart"
    assert one._prior({"scale": "logit"})["a"] == (0.0, 1.0)


def test_a_score_mixture_fit_whose_chains_disagree_saves_with_its_chain_table(fits, tmp_path, monkeypatch):
    """ScoreMixture's check() puts its chain_summary() table in post.convergence["chains"] when
    the chains disagree (r_hat above the limit): save refused it (a DataFrame is not JSON) with a
    message blaming get_params(); now it travels, alone and inside a stack."""
    monkeypatch.setattr("bayeval.core._diagnostics.RHAT_MAX", 0.0)  # any r_hat is "too high": the chains' table
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NUTS (importance sampling has no chains to compare), on the stack's data
        post = CASES["ScoreMixture"][0]().fit(_scores(), **{**FIT, "tune": 30, "sampler": "pymc"})
    table = post.convergence["chains"]
    assert isinstance(table, pd.DataFrame) and list(table.index) == [0, 1]
    again = be.load(be.save(post, tmp_path / "sm.nc"))
    pd.testing.assert_frame_equal(again.convergence["chains"], table)
    assert _same({k: v for k, v in again.convergence.items() if k != "chains"},
                 {k: v for k, v in post.convergence.items() if k != "chains"})
    np.testing.assert_array_equal(again.metric("average_precision"), post.metric("average_precision"))
    # a stack holding such a candidate
    stack = copy.copy(fits["Stack"])
    name = next(n for n, c in stack.candidates.items() if isinstance(c.model_spec, ScoreMixture))
    assert stack.candidates[name].n_draws == post.n_draws and stack.candidates[name].n_chains == post.n_chains
    stack.candidates = {**stack.candidates, name: post}
    back = be.load(be.save(stack, tmp_path / "stack.nc"))
    pd.testing.assert_frame_equal(back.candidates[name].convergence["chains"], table)
    # what cannot be stored is named where it sits, not blamed on get_params()
    post.convergence = {**post.convergence, "odd": object()}
    with pytest.raises(TypeError, match=r"post\.convergence\['odd'\] is an object .*`post\.convergence` must hold") as info:
        be.save(post, tmp_path / "odd.nc")
    assert "get_params" not in str(info.value)


def _seeded(seed):
    rng = np.random.default_rng(4)
    s = rng.random(60)
    data = EvalData(s, np.where(np.arange(60) < 10, (s > 0.5).astype(float), np.nan))
    return Posterior.from_probabilities(data, s, draws=40, chains=2, random_seed=seed, check=False)


def test_plug_in_posteriors_seeded_with_a_seed_sequence_or_generator_save_and_reload(tmp_path):
    """A SeedSequence seed was kept on the posterior and save raised json's TypeError; the spawn
    key must travel too, or a spawned child reloads with its parent's label draws."""
    parent = np.random.SeedSequence(7)
    child = np.random.SeedSequence(7).spawn(2)[1]
    draws = {}
    for label, seed in [("parent", parent), ("child", child), ("generator", np.random.default_rng(3)),
                        ("entropy list", np.random.SeedSequence([1, 2, 3]).spawn(3)[2])]:
        post = _seeded(seed)
        again = be.load(be.save(post, tmp_path / f"{label}.nc"))
        draws[label] = post.metric("accuracy", threshold=0.5).values
        np.testing.assert_array_equal(again.metric("accuracy", threshold=0.5).values, draws[label], err_msg=label)
        if isinstance(seed, np.random.SeedSequence):
            assert isinstance(again.random_seed, np.random.SeedSequence)
            assert again.random_seed.entropy == seed.entropy and again.random_seed.spawn_key == seed.spawn_key
        else:
            assert again.random_seed == post.random_seed and isinstance(again.random_seed, int)
    assert not np.array_equal(draws["parent"], draws["child"])  # the spawn key changes the draws


@pytest.mark.parametrize("name", ["probabilities", "probabilities-2d", "AnnotatorError", "AnnotatorError-3"])
def test_posteriors_pickle_with_identical_draws(name, fits):
    """from_probabilities and AnnotatorError posteriors held local closures: pickle (and so a
    process pool) refused them."""
    if name.startswith("probabilities"):
        post = _seeded(0)
        if name.endswith("2d"):
            rng = np.random.default_rng(5)
            post = Posterior.from_probabilities(post.data, rng.random((30, post.data.n_items)), random_seed=1,
                                                check=False)
    else:
        post = fits[name]
    again = pickle.loads(pickle.dumps(post))
    before, after = _draws(post), _draws(again)
    for key in before:
        np.testing.assert_array_equal(after[key], before[key], err_msg=key)


def test_saving_a_comparison_says_the_route_that_works(tmp_path):
    rng = np.random.default_rng(1)
    y = rng.random(200) < 0.3
    s = y * 1.5 + rng.normal(0, 1, 200)
    labels = np.where(np.arange(200) < 30, y, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = be.compare({"b": s + rng.normal(0, 0.7, 200), "a": s}, labels, random_seed=0, draws=60)
    with pytest.raises(ValueError) as info:
        be.save(cmp, tmp_path / "cmp.nc")
    msg = str(info.value)
    assert "`bayeval.save(cmp.posterior, path)`" in msg
    assert f"`bayeval.Comparison(bayeval.load(path), order={cmp.names!r})`" in msg
    assert not (tmp_path / "cmp.nc").exists()
    # the route it names works and gives the same figures
    be.save(cmp.posterior, tmp_path / "cmp.nc")
    again = be.Comparison(be.load(tmp_path / "cmp.nc"), order=cmp.names)
    assert again.names == cmp.names
    assert again.prob_better("a", "b") == cmp.prob_better("a", "b")
    assert be.Comparison(be.load(tmp_path / "cmp.nc")).prob_better("a", "b") == cmp.prob_better("a", "b")


def test_save_and_load_expand_the_home_folder(tmp_path, monkeypatch):
    """"~/fit.nc" was read as a folder named "~" (and the advice to create it made one)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    post = _seeded(0)
    path = be.save(post, "~/fit.nc")
    assert path == home / "fit.nc" and path.exists() and not (tmp_path / "~").exists()
    np.testing.assert_array_equal(be.load("~/fit.nc").metric("average_precision"), post.metric("average_precision"))
