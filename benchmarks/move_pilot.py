"""The resample-move refit's first step: the pilot against the step d^-1/4, paired.

The data are those of ``benchmarks/active.py --quick`` for trial T (``simulate_tags(5,
items_per_category=400, random_seed=1000 + T)``); LabelFlip as the loop fits it (2 chains
x 300 draws + 300 tuning, ``target_accept`` 0.85). The fit with nothing vetted is NUTS (seed
T); then the first batch -- ``--batch`` items drawn at random from the top-48 lists -- is
refitted from it ``--seeds`` times with each route. A seed gives both routes the same
reweighting and the same resampled draws (the pilot draws its random numbers after
them), so each pair differs only in the moves. Per refit: the HMC rounds, the first
round's acceptance, the gradient evaluations (the pilot's included) and the CPU seconds
of the refit (this process's; an untimed refit first compiles what the refits share).

Run: ``python benchmarks/move_pilot.py --trials 7 8`` (``--out FILE`` writes Markdown).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fit_speed import _git_rev, versions  # noqa: E402

from bayeval.core import sampling as S  # noqa: E402
from bayeval.models import LabelFlip, simulate_tags  # noqa: E402

FIT = dict(draws=300, tune=300, chains=2, cores=1, target_accept=0.85, progressbar=False, warn=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, nargs="+", default=[7, 8])
    ap.add_argument("--seeds", type=int, default=6)
    ap.add_argument("--batch", type=int, default=24)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    load = os.getloadavg()[0]
    rows = []
    for trial in args.trials:
        data, truth = simulate_tags(5, items_per_category=400, random_seed=1000 + trial)
        top = []
        for c in np.unique(data.categories):
            idx = np.flatnonzero(data.categories == c)
            top.extend(idx[np.argsort(-data.scores[idx])[:48]])
        pick = np.random.default_rng(trial).choice(np.asarray(top), args.batch, replace=False)
        model = LabelFlip()
        first = model.fit(data, random_seed=trial, **FIT)
        batch = data.with_labels(data.item_ids[pick], truth[pick])
        model.fit(batch, random_seed=99, previous=first, **FIT)  # not timed: compiles what the refits share
        for seed in range(args.seeds):
            for pilot in (False, True):
                S._MOVE_PILOT = pilot
                c0 = time.process_time()
                post = model.fit(batch, random_seed=100 + seed, previous=first, **FIT)
                cpu = time.process_time() - c0
                info = post.sampling
                mv = info.extra.get("move") if isinstance(info.extra.get("move"), dict) else None
                row = {"trial": trial, "seed": seed, "pilot": pilot, "route": info.sampler, "cpu": cpu,
                       "grads": info.n_grad_evals, "rounds": mv["rounds"] if mv else 0,
                       "first": mv["accept"][0] if mv else float("nan"),
                       "pilot_accept": mv.get("pilot", {}).get("accept", []) if mv else [],
                       "reason": info.fallback_reason}
                rows.append(row)
                print(row, flush=True)
    S._MOVE_PILOT = True
    lines = [
        "# The resample-move refit's first step: the pilot against d^-1/4 (paired)",
        "",
        f"`python benchmarks/move_pilot.py --trials {' '.join(map(str, args.trials))} --seeds {args.seeds} "
        f"--batch {args.batch}`; git {_git_rev()}; {versions()}; load (1 min) {load:.1f} at the start, "
        f"{os.getloadavg()[0]:.1f} at the end.",
        "",
        "| trial | seed | route | rounds: d^-1/4 / pilot | first round's acceptance | pilot's acceptances "
        "| gradients: d^-1/4 / pilot | CPU s: d^-1/4 / pilot |",
        "| ---: | ---: | --- | --- | --- | --- | --- | --- |",
    ]
    pairs = [(a, b) for a, b in zip(rows[::2], rows[1::2], strict=True)]
    for a, b in pairs:
        lines.append(f"| {a['trial']} | {a['seed']} | {a['route']} / {b['route']} | {a['rounds']} / {b['rounds']} "
                     f"| {a['first']:.2f} / {b['first']:.2f} | {', '.join(f'{x:.2f}' for x in b['pilot_accept'])} "
                     f"| {a['grads']:,} / {b['grads']:,} | {a['cpu']:.2f} / {b['cpu']:.2f} |")
    moved = [(a, b) for a, b in pairs if a["rounds"] and b["rounds"]]
    if moved:
        g = np.array([[a["grads"], b["grads"]] for a, b in moved], dtype=float)
        cp = np.array([[a["cpu"], b["cpu"]] for a, b in moved])
        rd = np.array([[a["rounds"], b["rounds"]] for a, b in moved], dtype=float)
        lines += ["", f"Moved on both routes: {len(moved)} pairs; mean rounds {rd[:, 0].mean():.2f} / "
                      f"{rd[:, 1].mean():.2f}; gradients, total {g[:, 0].sum():,.0f} / {g[:, 1].sum():,.0f} "
                      f"(ratio {g[:, 1].sum() / g[:, 0].sum():.2f}); CPU s, total {cp[:, 0].sum():.1f} / "
                      f"{cp[:, 1].sum():.1f} (ratio {cp[:, 1].sum() / cp[:, 0].sum():.2f}), median "
                      f"{np.median(cp[:, 0]):.2f} / {np.median(cp[:, 1]):.2f}."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
