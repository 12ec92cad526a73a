"""The vetting loop's first fit (no labels yet): cheaper routes against NUTS as the loop runs it.

The data are those of ``benchmarks/active.py --quick`` for trial T (``simulate_tags(5,
items_per_category=400, random_seed=1000 + T)``, nothing vetted); LabelFlip with
partial pooling, as the loop fits it (2 chains x 300 draws, ``target_accept`` 0.85).
Per data set:

* **reference**: NUTS with 300 tuning steps (the loop's first fit), and a second one with
  another seed (**NUTS again**): how far two fits of the same route land apart;
* **fewer tuning steps**: NUTS with ``--tunes`` tuning steps (default 150 and 100);
* **from the prior**: the refit machinery started from a prior sample -- prior draws
  weighted by the likelihood (the Pareto k and effective sample size of those weights say
  whether reweighting, with or without resample-move, could start from them).

Each fit's CPU seconds (this process's), gradient evaluations (NUTS's leapfrog steps,
tuning included), and its agreement with the reference: the z of the differences of means
and 5% / 95% quantiles of every scalar parameter over their Monte Carlo s.e. (as
``benchmarks/fit_speed.py --agreement``), against the 95% bound of the largest of that
many |z|.

Run: ``python benchmarks/first_fit.py --trials 7 8`` (``--out FILE`` writes Markdown).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_speed import _git_rev, _param_stats, agreement_stats, versions  # noqa: E402

from bayeval.models import LabelFlip, simulate_tags  # noqa: E402

NAMES = ("p_y1_z1", "p_y1_z0", "intercept", "slope", "fpr_mu", "lift_mu", "intercept_mu", "slope_mu",
         "fpr_sigma", "lift_sigma", "intercept_sigma", "slope_sigma")


def _nuts(model, data, seed, tune):
    from bayeval.core.sampling import _nuts_steps

    c0 = time.process_time()
    post = model.fit(data, draws=300, tune=tune, chains=2, cores=1, target_accept=0.85, random_seed=seed,
                     progressbar=False, warn=False)
    cpu = time.process_time() - c0
    return post, cpu, _nuts_steps(post.idata)


def _prior_weights(model, data, n, seed):
    """Pareto k and Kish ESS of prior draws weighted by the likelihood (posterior / prior)."""
    import arviz as az
    import pymc as pm
    from scipy import special

    from bayeval.core import sampling as S

    m = model._build_for_fit(data)
    c0 = time.process_time()
    with m:
        prior = pm.sample_prior_predictive(n, random_seed=seed, var_names=[v.name for v in m.free_RVs])
    c = S._Compiled(m)
    u = S._unconstrained(c, az.InferenceData(posterior=prior.prior))
    logp_all = m.compile_logp()
    logp_prior = m.compile_logp(vars=m.free_RVs)
    lw = np.array([logp_all(c.unravel(x)) - logp_prior(c.unravel(x)) for x in u])
    lw = lw - lw.max()
    lw_s, k = az.psislw(lw)
    w = np.exp(lw_s - special.logsumexp(lw_s))
    return float(k), float(1.0 / np.sum(w**2)), time.process_time() - c0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, nargs="+", default=[7, 8])
    ap.add_argument("--tunes", type=int, nargs="+", default=[150, 100])
    ap.add_argument("--prior-draws", type=int, default=2000)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    load = os.getloadavg()[0]
    lines = []
    for trial in args.trials:
        data, _ = simulate_tags(5, items_per_category=400, random_seed=1000 + trial)
        model = LabelFlip()
        ref, cpu_ref, g_ref = _nuts(model, data, trial, 300)
        base = _param_stats(ref.idata, [n for n in NAMES if n in ref.idata.posterior])
        rows = [("reference: NUTS, 300 tuning", cpu_ref, g_ref, None)]
        for label, seed, tune in [("NUTS again, 300 tuning", 100 + trial, 300),
                                  *[(f"NUTS, {t} tuning", 200 + trial, t) for t in args.tunes]]:
            post, cpu, g = _nuts(model, data, seed, tune)
            ag = agreement_stats(base, _param_stats(post.idata, [n for n in NAMES if n in post.idata.posterior]))
            rows.append((label, cpu, g, ag))
            print(f"trial {trial}: {label}: CPU {cpu:.1f} s, gradients {g:,}, max |z| means {ag['max_z_mean']:.2f} "
                  f"quantiles {ag['max_z_quantile']:.2f} (bound {ag['z_bound']:.2f}), n |z| > 3 {ag['n_over_3']}, "
                  f"sd ratio {ag['sd_ratio_min']:.2f}-{ag['sd_ratio_max']:.2f}", flush=True)
        k, kish, cpu_prior = _prior_weights(model, data, args.prior_draws, trial)
        print(f"trial {trial}: from the prior ({args.prior_draws} draws): Pareto k {k:.2f}, Kish ESS {kish:.1f}, "
              f"CPU {cpu_prior:.1f} s", flush=True)
        lines.append(f"| {trial} | reference: NUTS, 300 tuning | {cpu_ref:.1f} | {g_ref:,} | - | - | - |")
        for label, cpu, g, ag in rows[1:]:
            lines.append(f"| {trial} | {label} | {cpu:.1f} | {g:,} | {ag['max_z_mean']:.2f} / "
                         f"{ag['max_z_quantile']:.2f} ({ag['z_bound']:.2f}) | {ag['n_over_3']} of {ag['n_compared']} "
                         f"| {ag['sd_ratio_min']:.2f} / {ag['sd_ratio_max']:.2f} |")
        lines.append(f"| {trial} | from the prior: {args.prior_draws} prior draws weighted by the likelihood "
                     f"(Pareto k {k:.2f}, Kish ESS {kish:.1f}) | {cpu_prior:.1f} | - | - | - | - |")
    head = [
        "# The vetting loop's first fit (no labels): cheaper routes against NUTS",
        "",
        f"`python benchmarks/first_fit.py --trials {' '.join(map(str, args.trials))} --tunes "
        f"{' '.join(map(str, args.tunes))} --prior-draws {args.prior_draws}`; git {_git_rev()}; {versions()}; "
        f"load (1 min) {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end.",
        "",
        "| trial | route | CPU s | gradients | max \\|z\\| means / quantiles (bound) | \\|z\\| > 3 | sd ratio min / max |",
        "| ---: | --- | ---: | ---: | --- | --- | --- |",
    ]
    text = "\n".join(head + lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
