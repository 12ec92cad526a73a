"""Active testing on simulated noisy tags: P@K error vs fraction of the top-K lists vetted.

The active-testing paper's Figure 5 setting, simulated: NUS-WIDE-like tags (a relevant
tag is listed 38% of the time, an irrelevant one 1%), long-tailed category sizes, a
classifier with realistic scores (``bayeval.models.simulate_tags``). For each trial (a
new simulated data set) and strategy, the loop vets batches from the top-K lists,
refits ``LabelFlip`` after each batch and records the vetted-only, naive and learned
estimates of P@K per category (``bayeval.simulate``). Reported per strategy and
estimator, at each fraction vetted:

* the mean over trials of the mean absolute error across categories of P@K (the
  paper's "2-3%" at 50% vetted), and of the error of the mean P@K over categories;
* the coverage of the learned estimator's 90% intervals of mean P@K and of each
  category's P@K.

Run: ``python benchmarks/active.py`` (``--quick`` for a small version). Results go to
``benchmarks/results/active.md`` (written by hand from the printed tables). The loop's
refits against NUTS at every step (``--no-previous``; ``--routes FILE`` logs each fit's
route and seconds): ``benchmarks/results/active_refits.md``. A trial's fit before the
first batch is made once and shared by the strategies (``simulate``'s default);
``--separate-first-fits`` fits it once per strategy, as the loop did before; ``--no-pilot``
starts resample-move refits at the step d^-1/4 instead of the pilot's. The run ends
by printing the process's CPU seconds (its own and its children's, user + system).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

from bayeval.active import simulate
from bayeval.models import LabelFlip, simulate_tags


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--trials", type=int, default=None)
    ap.add_argument("--categories", type=int, default=None)
    ap.add_argument("--k", type=int, default=48)
    ap.add_argument("--save", default=None, help="pickle the full xarray Dataset to this file")
    ap.add_argument("--first-trial", type=int, default=0, help="index of the first trial (to split a run over processes)")
    ap.add_argument("--plot", default=None, metavar="PNG", help="save the error-vs-fraction-vetted figure")
    ap.add_argument("--no-previous", action="store_true",
                    help="refit with NUTS every time (fit(..., previous=None)): the loop before refits from the "
                         "previous fit, to time against")
    ap.add_argument("--merge", nargs="+", default=None, metavar="PICKLE",
                    help="print the tables of saved runs (from --save) together instead of running")
    ap.add_argument("--separate-first-fits", action="store_true",
                    help="fit the model before the first batch once per strategy (simulate(share_first_fit=False)), "
                         "not once per trial")
    ap.add_argument("--no-pilot", action="store_true",
                    help="resample-move refits start their moves at the step d^-1/4, not the pilot's (the route "
                         "before the pilot), to time against")
    ap.add_argument("--routes", default=None, metavar="JSON",
                    help="write how each fit was made (NUTS, reweighted, resampled and moved; its seconds, "
                         "Pareto k, ESS, fallback reason) to this file, and print a tally")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    if args.no_pilot:
        from bayeval.core import sampling

        sampling._MOVE_PILOT = False
    trials = args.trials or (2 if args.quick else 10)
    n_cat = args.categories or (5 if args.quick else 10)
    k = args.k
    fit = {"draws": 300, "tune": 300, "chains": 2, "cores": 1, "target_accept": 0.85}
    if args.no_previous:
        fit["previous"] = None  # simulate passes its last fit unless the keyword is given
    rows = []
    t0 = time.time()
    import xarray as xr

    if args.merge:
        import pickle

        parts = []
        for path in args.merge:
            with open(path, "rb") as fh:
                parts.append(pickle.load(fh))
        report(xr.concat(parts, dim="trial"), k, t0, args)
        return
    routes = _log_routes() if args.routes else None
    for trial in range(args.first_trial, args.first_trial + trials):
        if routes is not None:
            routes.append({"trial": trial})
        data, truth = simulate_tags(n_cat, items_per_category=400, random_seed=1000 + trial)
        ds = simulate(
            data, truth, LabelFlip(), metric="precision_at_k", k=k, strategies=("random", "expected_change"),
            budget=0.5, batch_size=n_cat * k // 10, trials=1, candidates="top_k", fit_kwargs=fit,
            random_seed=trial, share_first_fit=not args.separate_first_fits,
        )
        rows.append(ds)
        print(f"trial {trial + 1 - args.first_trial}/{trials} done ({time.time() - t0:.0f} s)", flush=True)
    all_ = xr.concat(rows, dim="trial")
    if routes is not None:
        _write_routes(routes, args.routes)
    if args.save:
        import pickle

        with open(args.save, "wb") as fh:
            pickle.dump(all_, fh)
    report(all_, k, t0, args)


def _log_routes() -> list:
    """Record every fit the loop makes (``bayeval.active.simulate._fit``): the route its
    ``post.sampling`` says, with its time; returns the list the records go to."""
    import importlib

    sim = importlib.import_module("bayeval.active.simulate")  # (the package's face names the function simulate)

    log, fit = [], sim._fit

    def logged(model, data, seed, fit_kwargs, progressbar, previous=None):
        t, c = time.perf_counter(), _cpu()
        post = fit(model, data, seed, fit_kwargs, progressbar, previous)
        info = post.sampling
        extra = info.extra if isinstance(info.extra, dict) else {}
        route = "nuts"
        if info.sampler == "importance":
            route = "moved" if isinstance(extra.get("move"), dict) else "reweighted"
        elif info.fallback_reason:
            route = "nuts (fallback)"
        log.append({"n_vetted": int(data.n_vetted), "route": route, "seconds": round(time.perf_counter() - t, 2),
                    "cpu_seconds": round(_cpu() - c, 2),
                    "pareto_k": _num(info.pareto_k), "ess": _num(info.ess),
                    "rounds": (extra.get("move") or {}).get("rounds") if isinstance(extra.get("move"), dict) else None,
                    "first_round_accept": _num(extra["move"]["accept"][0]) if isinstance(extra.get("move"), dict)
                    and extra["move"].get("accept") else None,
                    "pilot_accept": [round(a, 3) for a in extra["move"]["pilot"]["accept"]]
                    if isinstance(extra.get("move"), dict) and "pilot" in extra["move"] else None,
                    "reason": info.fallback_reason or ""})
        return post

    sim._fit = logged
    return log


def _cpu() -> float:
    """CPU seconds of this process and its finished children (compilers), user + system."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _num(x):
    x = float(x) if x is not None else float("nan")
    return None if x != x else round(x, 3)


def _write_routes(routes: list, path: str) -> None:
    import json
    from collections import Counter

    with open(path, "w") as fh:
        json.dump(routes, fh, indent=1)
    fits = [r for r in routes if "route" in r]
    tally = Counter(r["route"] for r in fits)
    secs = {k: sum(r["seconds"] for r in fits if r["route"] == k) for k in tally}
    cpu = {k: sum(r["cpu_seconds"] for r in fits if r["route"] == k) for k in tally}
    print("\nfits by route: " + ", ".join(f"{k} {n} ({secs[k]:.0f} s, {cpu[k]:.0f} CPU s)"
                                         for k, n in sorted(tally.items())))
    for r in fits:
        if r["route"] == "nuts (fallback)":
            print(f"  fallback at {r['n_vetted']} vetted: {r['reason']}")


def report(all_, k, t0, args):
    trials, n_cat = all_.sizes["trial"], all_.sizes["category"]
    frac = all_["fraction_vetted"].mean(("trial", "strategy")).values
    mae_cat = all_["category_abs_error"].mean("category", skipna=True)
    print(f"\nP@{k}: mean over {trials} trials of the mean |error| across {n_cat} categories")
    for strategy in all_["strategy"].values:
        for est in all_["estimator"].values:
            m = mae_cat.sel(strategy=strategy, estimator=est).mean("trial", skipna=True).values
            print(f"  {strategy:16s} {est:12s} " + " ".join(f"{v:6.3f}" for v in m))
    print("  fraction vetted              " + " ".join(f"{v:6.2f}" for v in frac))
    print(f"\nP@{k} mean over categories: mean |error|")
    for strategy in all_["strategy"].values:
        for est in all_["estimator"].values:
            m = all_["abs_error"].sel(strategy=strategy, estimator=est).mean("trial", skipna=True).values
            print(f"  {strategy:16s} {est:12s} " + " ".join(f"{v:6.3f}" for v in m))
    cov = all_["covered"].mean("trial").values
    print("\ncoverage of the learned 90% interval of mean P@K (per step)")
    for s, strategy in enumerate(all_["strategy"].values):
        print(f"  {strategy:16s} " + " ".join(f"{v:6.2f}" for v in cov[s]))
    cov_cat = all_["covered_category"].mean(("trial", "category")).values
    print("\ncoverage of the learned 90% intervals of per-category P@K (per step)")
    for s, strategy in enumerate(all_["strategy"].values):
        print(f"  {strategy:16s} " + " ".join(f"{v:6.2f}" for v in cov_cat[s]))
    print(f"\n({trials} trials x {all_.sizes['step']} steps; {time.time() - t0:.0f} s; {_cpu():.0f} CPU s)")
    if args is not None and args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 3.8))
        styles = {"naive": "--", "learned": "-"}
        for strategy, color in zip(all_["strategy"].values, ("C0", "C3")):
            for est, ls in styles.items():
                m = mae_cat.sel(strategy=strategy, estimator=est).mean("trial").values
                ax.plot(frac * 100, m, ls, color=color, marker="o", label=f"{strategy} + {est}")
        ax.axhline(0.03, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("% of the top-K lists vetted")
        ax.set_ylabel(f"mean |error| of P@{k} across categories")
        ax.set_title(f"Simulated noisy tags ({trials} trials x {n_cat} categories)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
