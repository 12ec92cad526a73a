"""Resample-move refits of LabelFlip against plain NUTS, on the vetting loop's data.

The data are those of ``benchmarks/active.py`` (``simulate_tags``: noisy tags,
``--categories`` categories of 400 items); a loop vets ``--batch`` random items of the
top-K lists per step. Step 0 is a NUTS fit; each later step is fitted twice: the refit
``fit(data, previous=<the refit before>)`` (the default route: reweighting, with
resample-move where the reweighted draws are too few) and a plain NUTS fit
(``previous=None``). Per step: both times, the refit's route (its sampler, Pareto k,
effective sample size, HMC rounds and acceptance, gradient evaluations) and the agreement
of the two posteriors: the z of the differences of means and 5% / 95% quantiles of every
scalar parameter (Monte Carlo s.e. of both, as ``benchmarks/fit_speed.py --agreement``
computes them) against the 95% bound of the largest of that many |z|. Refit times are
given as wall and CPU seconds (this process's); ``--no-pilot`` starts the moves at the
step ``d^-1/4`` instead of the pilot's (the route before the pilot), for a before/after
on the same seeds.

Run: ``python benchmarks/resample_move.py`` (``--steps``, ``--categories``, ``--batch``,
``--draws``). Results: printed, and with ``--out FILE`` written as Markdown.
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--categories", type=int, default=5)
    ap.add_argument("--k", type=int, default=48)
    ap.add_argument("--batch", type=int, default=24)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--draws", type=int, default=300)
    ap.add_argument("--tune", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    ap.add_argument("--no-pilot", action="store_true", help="the moves' first step d^-1/4 (no pilot)")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.no_pilot:
        from bayeval.core import sampling

        sampling._MOVE_PILOT = False
    load = os.getloadavg()[0]
    data, truth = simulate_tags(args.categories, items_per_category=400, random_seed=1000 + args.seed)
    rng = np.random.default_rng(args.seed)
    # the top-K items of each category, in a random vetting order
    top = []
    for c in np.unique(data.categories):
        idx = np.flatnonzero(data.categories == c)
        top.extend(idx[np.argsort(-data.scores[idx])[:args.k]])
    order = rng.permutation(np.asarray(top))
    fit = dict(draws=args.draws, tune=args.tune, chains=2, cores=1, target_accept=0.85, progressbar=False, warn=False)
    model = LabelFlip()

    def at(step):
        pos = order[:args.batch * (step + 1)]
        return data.with_labels(data.item_ids[pos], truth[pos])

    rows = []
    post = model.fit(at(0), random_seed=1, **fit)
    names = [n for n in ("p_y1_z1", "p_y1_z0", "intercept", "slope", "fpr_mu", "lift_mu", "intercept_mu", "slope_mu",
                         "fpr_sigma", "lift_sigma", "intercept_sigma", "slope_sigma") if n in post.idata.posterior]
    for step in range(1, args.steps + 1):
        d = at(step)
        t0, c0 = time.perf_counter(), time.process_time()
        post = model.fit(d, random_seed=10 + step, previous=post, **fit)
        t_refit, cpu_refit = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        base = model.fit(d, random_seed=100 + step, **fit)
        t_nuts = time.perf_counter() - t0
        info = post.sampling
        ag = agreement_stats(_param_stats(base.idata, names),
                             _param_stats(post.idata, names,
                                          weights_ess=info.ess if info.sampler == "importance" else None))
        mv = info.extra.get("move") if isinstance(info.extra.get("move"), dict) else {}
        pilot = mv.get("pilot", {})
        row = {"step": step, "vetted": int(d.vetted.sum()), "refit_s": t_refit, "refit_cpu": cpu_refit,
               "nuts_s": t_nuts, "first_accept": (mv.get("accept") or [np.nan])[0],
               "pilot": ",".join(f"{a:.2f}" for a in pilot.get("accept", [])) or "-",
               "sampler": info.sampler, "k": info.pareto_k, "kish": info.extra.get("kish_ess", float("nan")),
               "ess": info.ess, "rounds": mv.get("rounds", 0), "accept": np.mean(mv.get("accept", [np.nan])),
               "grads": info.n_grad_evals, "fallback": info.fallback_reason, **ag}
        rows.append(row)
        print(f"step {step}: vetted {row['vetted']}  refit {t_refit:6.2f} s, CPU {cpu_refit:6.2f} s "
              f"({info.sampler}, k {row['k']:.2f}, first round {row['first_accept']:.2f}, pilot {row['pilot']}, "
              f"Kish ESS {row['kish']:.0f}, ESS {row['ess']:.0f}, rounds {row['rounds']}, "
              f"accept {row['accept']:.2f}, grads {row['grads']})  NUTS {t_nuts:6.2f} s  "
              f"max |z| means {ag['max_z_mean']:.2f} quantiles {ag['max_z_quantile']:.2f} "
              f"(bound {ag['z_bound']:.2f}) sd ratio {ag['sd_ratio_min']:.2f}-{ag['sd_ratio_max']:.2f} "
              f"{info.fallback_reason}", flush=True)
    end_load = os.getloadavg()[0]
    lines = [
        "# Resample-move refits of LabelFlip against plain NUTS (the vetting loop's data)",
        "",
        f"`python benchmarks/resample_move.py --categories {args.categories} --batch {args.batch} --steps {args.steps} "
        f"--draws {args.draws} --tune {args.tune} --seed {args.seed}"
        f"{' --no-pilot' if args.no_pilot else ''}`; git {_git_rev()}; {versions()}; "
        f"load (1 min) {load:.1f} at the start, {end_load:.1f} at the end (a shared 2-core machine: the times "
        "of one row are comparable, rows at different loads less so).",
        "",
        "Step 0 is a NUTS fit of the first batch; step k refits from the refit of step k - 1 "
        "(`fit(data, previous=post)`) and, separately, fits the same data by NUTS. *z*: differences of means "
        "and of 5% / 95% quantiles over their Monte Carlo s.e.; *bound*: the 95% bound of the largest of that "
        "many |z| were the posteriors the same.",
        "",
        "| step | vetted | refit s | refit CPU s | route | Pareto k | Kish ESS | ESS | HMC rounds | acceptance "
        "| first round | pilot's acceptances | gradients | NUTS s | max \\|z\\| means / quantiles (bound) "
        "| sd ratio min / max |",
        "| ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- | --- |",
    ]
    for r in rows:
        route = r["sampler"] if not r["fallback"] else f"{r['sampler']} ({r['fallback']})"
        lines.append(f"| {r['step']} | {r['vetted']} | {r['refit_s']:.2f} | {r['refit_cpu']:.2f} | {route} "
                     f"| {r['k']:.2f} | {r['kish']:.0f} | {r['ess']:.0f} | {r['rounds']} | {r['accept']:.2f} "
                     f"| {r['first_accept']:.2f} | {r['pilot']} | {r['grads']:,} | {r['nuts_s']:.2f} "
                     f"| {r['max_z_mean']:.2f} / {r['max_z_quantile']:.2f} ({r['z_bound']:.2f}) "
                     f"| {r['sd_ratio_min']:.2f} / {r['sd_ratio_max']:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
