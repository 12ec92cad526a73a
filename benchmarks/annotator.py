"""True accuracy under annotator error: interval coverage and error on simulated data.

The article's setting: binary labels, one annotator label per item, a classifier
whose *measured* accuracy (agreement with the annotator) differs from its *true*
accuracy. Data are simulated with known truth from a difficulty model (item
difficulty ``d ~ N(0, 1)``; a rater is right with probability
``logistic(skill - loading * d)``), in three regimes:

* ``independent`` -- the classifier's errors do not depend on difficulty (loading
  0), the annotator's do (loading 1): errors independent given the class;
* ``correlated`` -- both err on the same hard items (loadings 2.5): strongly
  correlated errors;
* ``prior`` -- the parameters drawn from the model's own prior for every trial and
  the data from the model itself (probit link, difficulty on its quadrature
  nodes): a calibration check -- averaged over the prior, a correct
  implementation covers at the nominal rate whatever the identifiability,

each without gold labels and with a random gold subset of 50, 100 or 200 of the
1000 items. For every trial: the 90% equal-tailed posterior interval of the true
accuracy *of these items* (``post.metric("accuracy")``) and whether it covers the
realized true accuracy; the posterior mean's error; and the baselines: the
measured accuracy, the independence formula (given the annotator's *realized*
accuracy -- an oracle the model does not have) and the accuracy on the gold
items alone.

Speed: the model lists all possible observation patterns (prediction x annotator
label x gold label), so one model serves every setting; it is compiled once by
nutpie (NUTS, numba backend) and each trial only swaps the pattern counts
(``with_data``) and samples 2 chains. The model and the posterior wrapper are the
ones ``AnnotatorError.fit`` uses; ``fit`` samples with PyMC's NUTS by default
(``sample_kwargs={"nuts_sampler": "nutpie"}`` switches), which is about 20x slower
per fit on this model -- too slow for hundreds of trials on a shared 2-core
machine. Trials go round-robin over the settings until the time budget is spent.

Run: ``python benchmarks/annotator.py [--budget SECONDS] [--draws N]``; writes
``benchmarks/results/annotator.md``.
"""

from __future__ import annotations

import argparse
import logging
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

N_ITEMS = 1000
RHO_MAX = 0.95  # as in bayeval.annotators.model
GOLD_SIZES = (0, 50, 100, 200)
REGIMES = {
    # logistic (skill, loading) of the classifier and of the annotator; class-1 prevalence 0.4
    "independent": dict(model=(2.2, 0.0), annotator=(3.3, 1.0)),
    "correlated": dict(model=(3.7, 2.5), annotator=(5.5, 2.5)),
    "prior": None,
}


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def prior_truth(rng, spec):
    """Parameters drawn from AnnotatorError's priors (binary, one annotator)."""
    u_m = rng.beta(*spec.model_difficulty)
    return dict(
        prevalence=rng.dirichlet(np.full(2, spec.prevalence_concentration))[1],
        model=(rng.beta(*spec.model_accuracy, size=2), RHO_MAX * (2 * u_m - 1)),
        annotator=(rng.beta(*spec.annotator_accuracy, size=2), RHO_MAX * rng.beta(*spec.annotator_difficulty)),
    )


def simulate(rng, regime, spec, n_gold):
    """Truth, predictions, annotations (one per item) and gold labels (NaN = unknown)."""
    z_prev = 0.4
    if regime == "prior":
        truth = prior_truth(rng, spec)
        z_prev = truth["prevalence"]
        # the model exactly: difficulty on its quadrature nodes, probit link
        nodes, weights = np.polynomial.hermite_e.hermegauss(spec.n_nodes)
        d = rng.choice(nodes, size=N_ITEMS, p=weights / weights.sum())
    else:
        truth = REGIMES[regime]
        d = rng.normal(size=N_ITEMS)
    z = (rng.random(N_ITEMS) < z_prev).astype(int)

    def rate(params):
        if regime == "prior":
            acc, rho = params
            p_right = ndtr((ndtri(acc[z]) - rho * d) / np.sqrt(1 - rho**2))
        else:
            skill, loading = params
            p_right = sigmoid(skill - loading * d)
        return np.where(rng.random(N_ITEMS) < p_right, z, 1 - z)

    pred = rate(truth["model"])
    ann = rate(truth["annotator"]).astype(float)
    gold = np.full(N_ITEMS, np.nan)
    if n_gold:
        pick = rng.choice(N_ITEMS, n_gold, replace=False)
        gold[pick] = z[pick]
    return z, pred, ann, gold


class Sampler:
    """One model, compiled once by nutpie, for every data set (all patterns listed)."""

    def __init__(self, **priors):
        import nutpie

        from bayeval.annotators import AnnotatorError
        from bayeval.annotators._checks import observe as _observe

        self.spec = AnnotatorError(**priors)
        self.observe = _observe
        z, pred, ann, gold = simulate(np.random.default_rng(0), "independent", self.spec, 10)
        self.model = self.spec._build(_observe(pred, ann, gold, 2, all_patterns=True))
        self.compiled = nutpie.compile_pymc_model(self.model, backend="numba")

    def fit(self, obs, draws, tune, seed):
        import nutpie

        compiled = self.compiled.with_data(pattern_count=obs.counts)
        return nutpie.sample(compiled, draws=draws, tune=tune, chains=2, cores=1, seed=seed, progress_bar=False)


class Setting:
    def __init__(self, sampler, regime, n_gold, draws, tune):
        self.sampler, self.spec = sampler, sampler.spec
        self.regime, self.n_gold, self.draws, self.tune = regime, n_gold, draws, tune
        self.rows = []

    def trial(self, seed):
        import arviz as az

        from bayeval.annotators.bounds import true_accuracy_bounds

        rng = np.random.default_rng([seed, self.n_gold, list(REGIMES).index(self.regime)])
        z, pred, ann, gold = simulate(rng, self.regime, self.spec, self.n_gold)
        obs = self.sampler.observe(pred, ann, gold, 2, all_patterns=True)
        t0 = time.perf_counter()
        idata = self.sampler.fit(obs, self.draws, self.tune, seed)
        post = self.spec._wrap(obs, idata, pred.astype(float), seed)
        acc = post.metric("accuracy").values.ravel()
        lo, hi = np.quantile(acc, [0.05, 0.95])
        truth = float((pred == z).mean())
        measured = float((pred == ann).mean())
        a_gt = float((ann == z).mean())
        known = ~np.isnan(gold)
        err_m, err_a = pred != z, ann != z
        self.rows.append(
            dict(
                regime=self.regime,
                gold=self.n_gold,
                seed=seed,
                truth=truth,
                mean=float(acc.mean()),
                lo=lo,
                hi=hi,
                covered=bool(lo <= truth <= hi),
                width=hi - lo,
                measured=measured,
                annotator_acc=a_gt,
                error_phi=float(np.corrcoef(err_m, err_a)[0, 1]) if err_m.any() and err_a.any() else np.nan,
                posterior_phi=float(post.idata.posterior["error_correlation"].mean()),
                independence_oracle=true_accuracy_bounds(measured, a_gt).independent,
                gold_only=float((pred[known] == z[known]).mean()) if known.any() else np.nan,
                divergences=int(idata.sample_stats["diverging"].sum()),
                ess_model_accuracy=float(az.ess(idata, var_names=["model_accuracy"])["model_accuracy"]),
                rhat_max=float(
                    az.rhat(idata, var_names=["model_accuracy", "model_difficulty_corr"]).to_array().max()
                ),
                seconds=time.perf_counter() - t0,
            )
        )


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (regime, gold), g in df.groupby(["regime", "gold"], sort=False):
        n = len(g)
        cov = g["covered"].mean()
        err = g["mean"] - g["truth"]

        def rmse(col, g=g):
            return float(np.sqrt(np.nanmean((g[col] - g["truth"]) ** 2)))

        out.append(
            {
                "regime": regime,
                "gold": gold,
                "trials": n,
                "coverage_90": cov,
                "mc_se": np.sqrt(cov * (1 - cov) / n) if 0 < cov < 1 else np.sqrt(0.09 / n),
                "mean_width": g["width"].mean(),
                "bias": err.mean(),
                "rmse_posterior": float(np.sqrt((err**2).mean())),
                "rmse_measured": rmse("measured"),
                "rmse_independence_oracle": rmse("independence_oracle"),
                "rmse_gold_only": rmse("gold_only") if gold else np.nan,
                "true_acc_mean": g["truth"].mean(),
                "true_error_phi": g["error_phi"].mean(),
                "posterior_phi": g["posterior_phi"].mean(),
                "divergent_trials": int((g["divergences"] > 0).sum()),
                "median_ess": g["ess_model_accuracy"].median(),
                "max_rhat": g["rhat_max"].max(),
                "sec_per_trial": g["seconds"].mean(),
            }
        )
    return pd.DataFrame(out)


def to_markdown(table: pd.DataFrame) -> str:
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, row in table.iterrows():
        cells = []
        for c in cols:
            v = row[c]
            if isinstance(v, float | np.floating):
                cells.append("" if np.isnan(v) else f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}")
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=float, default=780, help="seconds in all (compilation included)")
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--tune", type=int, default=300)
    parser.add_argument("--max-trials", type=int, default=1000)
    parser.add_argument("--out", default=str(Path(__file__).with_name("results") / "annotator.md"))
    parser.add_argument("--regimes", nargs="+", default=list(REGIMES), choices=list(REGIMES))
    parser.add_argument("--gold", nargs="+", type=int, default=list(GOLD_SIZES))
    parser.add_argument("--model-difficulty", nargs=2, type=float, default=None, metavar=("A", "B"),
                        help="Beta prior of the classifier's difficulty correlation (AnnotatorError's default if not given)")
    parser.add_argument("--annotator-difficulty", nargs=2, type=float, default=None, metavar=("A", "B"),
                        help="Beta prior of the annotators' difficulty correlation")
    args = parser.parse_args(argv)
    priors = {}
    if args.model_difficulty:
        priors["model_difficulty"] = tuple(args.model_difficulty)
    if args.annotator_difficulty:
        priors["annotator_difficulty"] = tuple(args.annotator_difficulty)
    logging.getLogger("pymc").setLevel(logging.ERROR)

    start = time.perf_counter()
    logging.getLogger("nutpie").setLevel(logging.ERROR)
    sampler = Sampler(**priors)
    settings = [Setting(sampler, r, g, args.draws, args.tune) for r in args.regimes for g in args.gold]
    print(f"compiled the model in {time.perf_counter() - start:.0f} s", flush=True)
    seed = 0
    while seed == 0 or (seed < args.max_trials and time.perf_counter() - start < args.budget):
        for s in settings:
            s.trial(seed)
        seed += 1
        print(f"round {seed} done at {time.perf_counter() - start:.0f} s", flush=True)
    df = pd.DataFrame([r for s in settings for r in s.rows])
    table = summarize(df)
    elapsed = time.perf_counter() - start
    print(table.to_string())
    raw = Path(args.out).with_suffix(".csv")
    df.to_csv(raw, index=False)
    text = f"""# True accuracy under annotator error: simulation benchmark

Generated by `python benchmarks/annotator.py {" ".join(argv if argv is not None else sys.argv[1:])}`
on {platform.node() or "a shared machine"} ({platform.processor() or platform.machine()}), a shared
2-core machine; {elapsed / 60:.1f} min wall, {seed} round(s) of trials (all settings per round).
Raw per-trial results: `{raw.name}`.

Setup: {N_ITEMS} items, binary, one annotator label per item, class-1 prevalence 0.4 (drawn
from the prior in the `prior` regime). `{sampler.spec!r}` with priors model_difficulty={sampler.spec.model_difficulty},
annotator_difficulty={sampler.spec.annotator_difficulty} (the rest default), NUTS (nutpie) 2 chains x
{args.draws} draws ({args.tune} tuning). `true_error_phi`: mean realized correlation of
the classifier's and the annotator's error indicators; `posterior_phi`: mean posterior
mean of the model's `error_correlation`. Coverage = share of trials whose 90% equal-tailed
posterior interval of the true accuracy on these items contains the realized true accuracy;
`mc_se` = its Monte Carlo standard error sqrt(c(1 - c)/trials) (sqrt(0.09/trials) when c is 0
or 1). `bias`/`rmse_posterior`: posterior mean minus truth. Baselines (RMSE against the
truth): the measured accuracy, the independence formula given the annotator's *realized*
accuracy (an oracle), and the accuracy on the gold items alone.

{to_markdown(table)}
"""
    Path(args.out).write_text(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
