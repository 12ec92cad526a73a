"""Label efficiency: how many labels each method needs for an honest interval of a given width.

On the real-score pools of ``benchmarks/real_scores.py`` (the pools that chose the default
and the held-out ones), for each budget and label set, every method's 90% interval of
AP, P@K (K = 1% of N), and precision and recall at the pool's fixed threshold is checked
against the pool's true value:

``vetted-only``      the metric of the vetted items alone, percentile bootstrap (random labels);
``PPI++``            prediction-powered inference, power-tuned (ppi-python's ``ppi_mean_ci``
                     for precision; the same estimator on the linearized ratio for recall),
                     with the score (a logistic of it for margins and log-odds) as the
                     prediction (random labels);
``default/random``   ``bayeval.fit`` on random labels;
``default/design``   ``bayeval.fit`` on a designed batch of the whole budget
                     (``bayeval.active.design``, for AP);
``default/active``   a designed first batch of 20, then batches chosen by expected change
                     of AP (``bayeval.select``), refitting after each, to every budget;
``default/auto``     the same with ``strategy="auto"`` (what ``bayeval select`` and
                     ``ActiveSession`` do): a quarter of each batch after the first from the
                     design's least-vetted strata (``bayeval.active.explore``);
``logistic/…``, ``monotone/…``  each of the default's candidates alone (random and designed labels).

The random label sets are nested (the first ``b`` of one random order), and an active run
passes through every budget, so each set costs one run per method.

Run (results in ``benchmarks/results/label_efficiency.md``, rows in ``label_efficiency.csv``)::

    pip install -e ".[bench]"
    python benchmarks/label_efficiency.py --sets 20 --out benchmarks/results/label_efficiency.md

``--pools a,b`` runs only those pools and ``--csv`` names the rows' file, so that a run can be
split over processes; ``--report CSV [CSV ...]`` writes the tables from such files.
``--quick`` runs a small version (one pool, two budgets, two sets) as the tests do.
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time
import warnings
import zlib

import numpy as np
import pandas as pd

warnings.filterwarnings("ignore", category=FutureWarning)
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import real_scores as R  # noqa: E402

import bayeval as be  # noqa: E402
from bayeval.active import design, select  # noqa: E402

HDI = 0.9
BUDGETS = (20, 30, 50, 100, 200)
FIRST_BATCH = 20
WIDTHS = (0.10, 0.20)
COVERAGE_FLOOR = 0.85


# ------------------------------------------------------------------- methods


def _specs(pool) -> dict:
    s = R._metric_specs(pool)
    return {k: v for k, v in s.items() if k != "F1"}


def _interval(post, specs) -> dict:
    return R._interval(post, specs)


def _as_prob(pool, s):
    return s if pool.kind == "probabilities" else 1.0 / (1.0 + np.exp(-np.clip(s, -50, 50)))


def ppi_plus(pool, idx, specs) -> dict:
    """PPI++ (power-tuned) intervals of precision and recall at the pool's threshold."""
    from ppi_py import ppi_mean_ci
    from scipy import stats

    n = pool.scores.size
    unl = np.setdiff1d(np.arange(n), idx)
    f = _as_prob(pool, pool.scores)
    flag = (pool.scores >= pool.threshold).astype(float)
    y = pool.truth.astype(float)
    out = {}
    for lab, (m, kw) in specs.items():
        if m == "precision":
            li, ui = idx[flag[idx] == 1], unl[flag[unl] == 1]
            if li.size < 2 or ui.size < 1:
                out[lab] = (np.nan, np.nan, np.nan)
                continue
            lo, hi = ppi_mean_ci(y[li], f[li], f[ui], alpha=1 - HDI)
            lo, hi = float(np.ravel(lo)[0]), float(np.ravel(hi)[0])
            out[lab] = ((lo + hi) / 2, lo, hi)
        elif m == "recall":
            # recall = E[y g] / E[y]: PPI++ on the linearized ratio (M-estimation with a tuned lambda)
            g = flag
            yl, fl, fu, gl, gu = y[idx], f[idx], f[unl], g[idx], g[unl]
            nl, nu = yl.size, fu.size
            if yl.sum() < 1:
                out[lab] = (np.nan, np.nan, np.nan)
                continue

            def est(lam):
                a = lam * np.mean(fu * gu) + np.mean(yl * gl - lam * fl * gl)
                b = lam * np.mean(fu) + np.mean(yl - lam * fl)
                return a / b if b > 0 else np.nan, b

            r0, b0 = est(0.0)
            psi = (yl * gl - r0 * yl) / b0
            phi_l = (fl * gl - r0 * fl) / b0
            phi_u = (fu * gu - r0 * fu) / b0
            var_phi = np.var(np.r_[phi_l, phi_u])
            lam = float(np.clip(np.cov(psi, phi_l)[0, 1] / ((1 + nl / nu) * var_phi), 0, 1)) if var_phi > 0 else 0.0
            r, b = est(lam)
            phi_l = (fl * gl - r * fl) / b
            phi_u = (fu * gu - r * fu) / b
            psi = (yl * gl - r * yl) / b
            se = np.sqrt(np.var(psi - lam * phi_l) / nl + lam**2 * np.var(phi_u) / nu)
            z = stats.norm.ppf(0.5 + HDI / 2)
            out[lab] = (float(r), float(max(0.0, r - z * se)), float(min(1.0, r + z * se)))
    return out


# --------------------------------------------------------------------- runs


#: extra candidates stacked with the default's (``--flat``: the flat-ended monotone curve)
EXTRA_CANDIDATES: list = []


def _fit(data, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if EXTRA_CANDIDATES:
            from bayeval.models.stacking import default_candidates

            cands = default_candidates(data) + list(EXTRA_CANDIDATES)
            return be.fit(data, candidates=cands, random_seed=seed, warn=False)
        return be.fit(data, random_seed=seed, warn=False)


def _labelled(pool, idx):
    lab = np.full(pool.scores.size, np.nan)
    lab[idx] = pool.truth[idx]
    return be.EvalData(pool.scores, lab)


def floor_reachable(pool, thresholds, min_flagged, floor=None) -> bool:
    """Whether any of ``thresholds`` that flags at least ``min_flagged`` items truly has
    precision >= ``floor`` (default the pool's): when none does, "no threshold meets it" is the
    right answer (digits5_nb_prob: its best, the 505 scores of exactly 1.0, has precision 0.35 < 0.6)."""
    floor = pool.floor if floor is None else floor
    flagged = pool.scores[None, :] >= np.asarray(thresholds, dtype=float)[:, None]
    k = flagged.sum(axis=1)
    prec = (flagged * pool.truth[None, :]).sum(axis=1) / np.maximum(k, 1)
    return bool(((k >= max(min_flagged, 1)) & (prec >= floor)).any())


def _threshold_row(pool, budget, rep, method, post):
    """The precision-floor rule (precision >= the pool's floor with probability 0.9, the
    default min_flagged): was a threshold said to meet it, does it truly, what it flags, and
    could any candidate threshold meet it at all (``feasible``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rec = be.recalibrate(post, min_precision=pool.floor, prob=0.9)
    pred = pool.scores >= rec.threshold
    true_prec = float(pool.truth[pred].mean()) if pred.any() else np.nan
    feasible = floor_reachable(pool, rec.probability["threshold"].values, rec.min_flagged)
    return [{"pool": pool.name, "budget": budget, "set": rep, "method": method, "metric": "threshold_rule",
             "truth": pool.floor, "mean": true_prec, "lo": np.nan, "hi": np.nan,
             "covered": bool(true_prec >= pool.floor) if rec.met else np.nan, "width": np.nan, "abs_err": np.nan,
             "met": bool(rec.met), "n_flagged": int(pred.sum()), "min_flagged": int(rec.min_flagged),
             "feasible": feasible}]


def threshold_right(tr: pd.DataFrame) -> pd.Series:
    """Per threshold row: the rule's answer was right -- a threshold said to meet the floor that
    truly does, or "none meets it" where no threshold can (rows without ``feasible``, from runs
    before it was recorded: NaN where none was said to meet it)."""
    met = tr.met.astype(float) == 1
    held = tr.covered.astype(float) == 1
    feasible = tr["feasible"] if "feasible" in tr else pd.Series(np.nan, index=tr.index)
    refusal = feasible.map(lambda f: np.nan if pd.isna(f) else float(not bool(f)))
    return pd.Series(np.where(met, held.astype(float), refusal), index=tr.index, dtype=float)


def _rows(pool, budget, rep, method, ints, truth, extra=None):
    out = []
    for mlab, (mean, lo, hi) in ints.items():
        t = truth[mlab]
        ok = np.isfinite(lo) and np.isfinite(hi)
        out.append({"pool": pool.name, "budget": budget, "set": rep, "method": method, "metric": mlab,
                    "truth": t, "mean": mean, "lo": lo, "hi": hi,
                    "covered": bool(lo - 1e-9 <= t <= hi + 1e-9) if ok else np.nan,
                    "width": (hi - lo) if ok else np.nan, "abs_err": abs(mean - t) if np.isfinite(mean) else np.nan,
                    "met": np.nan, "n_flagged": np.nan, "min_flagged": np.nan, **(extra or {})})
    return out


ROUTES = ("random", "design", "active", "auto")


def _active_rows(pool, budgets, rep, seed, specs, truth, strategy):
    """A designed first batch, then batches chosen by ``strategy`` (expected change of AP,
    or "auto": expected change with a quarter of each batch exploring the design's
    least-vetted strata), refitting after each batch, through every budget."""
    method = "default/active" if strategy == "expected_change" else "default/auto"
    vidx = design(pool.scores, min(FIRST_BATCH, budgets[0]), random_seed=np.random.default_rng([seed, rep, 2]))
    rows = []
    post = None  # the fit on vidx: it reports a budget and chooses the next batch (the same fit, seed and data)
    for b in budgets:
        if vidx.size < b:
            if post is None:
                post = _fit(_labelled(pool, vidx), rep)
            new = select(post, metric="average_precision", size=b - vidx.size, strategy=strategy,
                         random_seed=np.random.default_rng([seed, rep, b, 3]))
            vidx = np.r_[vidx, new]
        post = _fit(_labelled(pool, vidx), rep)
        rows += _rows(pool, b, rep, method, _interval(post, specs), truth)
        rows += _threshold_row(pool, b, rep, method, post)
    return rows


def run_pool(pool, budgets, n_sets, seed=0, log=print, first_set=0, routes=ROUTES) -> list[dict]:
    specs = _specs(pool)
    truth = R._truth(pool, specs)
    n = pool.scores.size
    budgets = [b for b in budgets if b <= 0.8 * n]
    rows = []
    for rep in range(first_set, first_set + n_sets):
        t0 = time.perf_counter()
        rng = np.random.default_rng([seed, rep, zlib.crc32(pool.name.encode())])
        order = rng.permutation(n)
        for b in budgets:
            idx = order[:b]
            data = _labelled(pool, idx)
            if "random" in routes:
                post = _fit(data, rep)
                rows += _rows(pool, b, rep, "default/random", _interval(post, specs), truth)
                rows += _threshold_row(pool, b, rep, "default/random", post)
                for name, c in post.candidates.items():
                    rows += _rows(pool, b, rep, f"{name.split('/')[1]}/random", _interval(c, specs), truth)
                rows += _rows(pool, b, rep, "vetted-only", R.vetted_only_interval(data, specs, rng), truth)
                rows += _rows(pool, b, rep, "PPI++", ppi_plus(pool, idx, {k: v for k, v in specs.items()
                                                                          if v[0] in ("precision", "recall")}), truth)
            if "design" in routes:  # a designed batch of the whole budget
                didx = design(pool.scores, b, random_seed=np.random.default_rng([seed, rep, b, 1]))
                dpost = _fit(_labelled(pool, didx), rep)
                rows += _rows(pool, b, rep, "default/design", _interval(dpost, specs), truth)
                rows += _threshold_row(pool, b, rep, "default/design", dpost)
                for name, c in dpost.candidates.items():
                    rows += _rows(pool, b, rep, f"{name.split('/')[1]}/design", _interval(c, specs), truth)
        if "active" in routes:  # greedy expected change after the first batch
            rows += _active_rows(pool, budgets, rep, seed, specs, truth, "expected_change")
        if "auto" in routes:  # what bayeval select / ActiveSession do by default
            rows += _active_rows(pool, budgets, rep, seed, specs, truth, "auto")
        log(f"  {pool.name} set {rep}: {time.perf_counter() - t0:.0f} s", flush=True)
    return rows


# -------------------------------------------------------------------- tables


def labels_to_width(df, width, floor=COVERAGE_FLOOR) -> pd.DataFrame:
    """Per pool, method and metric: the fewest labels on the budget grid at which the mean
    interval width is at most ``width`` with coverage at least ``floor``, interpolated
    log-linearly in the budget between the grid's budgets (NaN: not within the grid)."""
    g = df.groupby(["pool", "metric", "method", "budget"]).agg(width=("width", "mean"), covered=("covered", "mean"))
    out = {}
    for (pool, metric, method), sub in g.groupby(level=[0, 1, 2]):
        sub = sub.droplevel([0, 1, 2]).sort_index()
        need = np.nan
        prev = None
        for b, r in sub.iterrows():
            if r["width"] <= width and r["covered"] >= floor:
                if prev is not None and prev[1] > width:
                    (b0, w0) = prev
                    w1 = max(float(r["width"]), 1e-9)  # a zero-width interval (every label known)
                    t = (np.log(w0) - np.log(width)) / (np.log(w0) - np.log(w1))
                    need = float(np.exp(np.log(b0) + t * (np.log(b) - np.log(b0))))
                else:
                    need = float(b)
                break
            prev = (b, r["width"])
        out[(pool, metric, method)] = need
    return pd.Series(out, name="labels").rename_axis(["pool", "metric", "method"]).unstack("method")


#: the columns :func:`width_at_coverage` reads
_INTERVAL_COLUMNS = {"mean", "lo", "hi", "truth"}
#: grid of the factors by which :func:`width_at_coverage` widens intervals about their centres
_WIDEN = np.exp(np.linspace(np.log(0.2), np.log(50.0), 801))


def width_at_coverage(rows: pd.DataFrame, level: float) -> tuple[float, float, float]:
    """``(factor, mean width, coverage)``: the smallest factor (on :data:`_WIDEN`) by which the
    rows' intervals, widened or narrowed about their point estimates and cut to [0, 1], hold
    the truth in at least ``level`` of the rows, and their mean width then; ``(inf, nan,
    best coverage)`` when no factor gets there (e.g. zero-width intervals off the truth).

    A measuring device, not a method: the factor is chosen with the truth, so that two
    methods' widths can be compared at the same coverage (an interval that covers less
    often than it says looks narrower than it is).

    >>> import pandas as pd
    >>> r = pd.DataFrame({"mean": [0.5, 0.5], "lo": [0.4, 0.45], "hi": [0.6, 0.55], "truth": [0.58, 0.58]})
    >>> [round(x, 2) for x in width_at_coverage(r, 1.0)]
    [1.6, 0.24, 1.0]
    """
    r = rows.dropna(subset=sorted(_INTERVAL_COLUMNS))
    if r.empty:
        return np.inf, np.nan, np.nan
    m, lo, hi, t = (r[c].to_numpy(float) for c in ("mean", "lo", "hi", "truth"))
    best = 0.0
    for c in _WIDEN:
        a, b = np.clip(m - c * (m - lo), 0.0, 1.0), np.clip(m + c * (hi - m), 0.0, 1.0)
        cov = float(np.mean((a - 1e-9 <= t) & (t <= b + 1e-9))) if len(t) else np.nan
        best = max(best, cov)
        if cov >= level:
            return float(c), float(np.mean(b - a)), cov
    return np.inf, np.nan, best


def _equal_coverage_lines(df, level: float = 0.90) -> list[str]:
    """AP width at 90% coverage: each method's intervals widened (or narrowed) until they cover as
    often as they say, pooled over pools, per budget."""
    ap = df[(df.metric == "AP")]
    methods = [m for m in ("vetted-only", "default/random", "default/design", "default/auto") if m in set(ap.method)]
    if "vetted-only" not in methods or "default/random" not in methods or not _INTERVAL_COLUMNS <= set(ap.columns):
        return []
    lines = [f"## AP: width at equal coverage ({level:.0%})\n",
             "A method whose intervals cover less often than they say looks narrower than it is. Here each "
             f"method's AP intervals are widened (or narrowed) about their centres by the one factor that makes them "
             f"hold the truth in {level:.0%} of the label sets, pooled over pools, per budget; the factor is found with "
             "the truth (a measuring device, not something a user can do). `-`: no factor gets there (the best "
             "coverage reached in brackets: intervals of width 0 off the truth, e.g. the vetted-only bootstrap with "
             "no vetted positive).\n",
             "| budget | " + " | ".join(f"{m}: factor / width" for m in methods) + " | default/random over vetted-only |",
             "|---:|" + "---|" * len(methods) + "---:|"]
    for b in sorted(ap.budget.unique()):
        cells, w = [], {}
        for m in methods:
            c, width, cov = width_at_coverage(ap[(ap.method == m) & (ap.budget == b)], level)
            w[m] = width
            cells.append(f"{c:.2f} / {width:.3f}" if np.isfinite(c) else f"- ({cov:.2f})")
        ratio = w["default/random"] / w["vetted-only"] if np.isfinite(w["vetted-only"]) else np.nan
        cells.append(_fmt(ratio, 2) if np.isfinite(ratio) else "vetted-only never covers")
        lines.append(f"| {b} | " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def _paired_active_lines(df) -> list[str]:
    """Greedy expected change against "auto" (with its exploring share), on the label sets
    (pool, set) where both ran: the same designed first batch, so the pairs differ only by
    how the later batches were chosen."""
    a = df[df.method.isin(["default/active", "default/auto"]) & (df.metric != "threshold_rule")]
    if a.method.nunique() < 2:
        return []
    both = a.groupby(["pool", "set"]).method.nunique()
    keep = both[both == 2].index
    a = a.set_index(["pool", "set"]).loc[keep].reset_index()
    n_sets = len(keep)
    lines = [f"## Active selection: greedy expected change against `\"auto\"` (paired, {n_sets} label sets over "
             f"{a.pool.nunique()} pools)\n",
             "`default/active`: after the designed first batch of 20, every batch by expected change of AP; "
             "`default/auto`: the same with a quarter of every batch from `bayeval.active.explore` (the design's "
             "least-vetted strata). Coverage / mean width.\n",
             "| metric | method | " + " | ".join(f"{b} labels" for b in sorted(a.budget.unique())) + " |",
             "|---|---|" + "---:|" * a.budget.nunique()]
    for metric in ("AP", "P@", "precision", "recall", "all"):
        sub = a if metric == "all" else (a[a.metric.str.startswith("P@")] if metric == "P@" else a[a.metric == metric])
        for m in ("default/active", "default/auto"):
            x = sub[sub.method == m].groupby("budget").agg(c=("covered", "mean"), w=("width", "mean"))
            lines.append(f"| {metric if metric != 'P@' else 'P@K'} | {m} | "
                         + " | ".join(f"{x.loc[b, 'c']:.2f} / {x.loc[b, 'w']:.3f}" if b in x.index else ""
                                      for b in sorted(a.budget.unique())) + " |")
    cov = a[a.budget >= 100].groupby(["pool", "method"]).covered.mean().unstack("method")
    lines.append("\nPer pool at 100 and 200 labels (all four metrics; greedy / auto): "
                 + ", ".join(f"{p} {r['default/active']:.2f} / {r['default/auto']:.2f}" for p, r in cov.iterrows())
                 + ".\n")
    return lines


def _targets_lines(df) -> list[str]:
    """The issue's targets, computed from these rows (see docs/validation.md for the reading)."""
    iv = df[(df.metric != "threshold_rule") & df.covered.notna()]
    iv = iv.assign(covered=iv.covered.astype(float))
    r = iv[iv.method == "default/random"]
    lines = ["## Targets, from these rows\n", "| target | measured | met |", "|---|---|---|"]
    if r.empty:  # a run of other routes only (--routes design, say)
        lines.append("| default, random labels: 90% intervals cover >= 0.85 pooled, >= 0.75 in every pool | "
                     "no random-label rows in this run | not measured |")
    else:
        pooled = r.covered.mean()
        per_pool = r.groupby("pool").covered.mean()
        # nested label sets: a pool's cell rests on this many (rows without `set`: not said)
        n_sets = r.groupby("pool").set.nunique() if "set" in r else None
        lines.append(f"| default, random labels: 90% intervals cover >= 0.85 pooled (AP, P@K, precision, recall; "
                     f"all budgets) | {pooled:.3f} over {len(r)} intervals | {'yes' if pooled >= 0.85 else 'no'} |")
        low = per_pool[per_pool < 0.75]
        lines.append(f"| ... and >= 0.75 in every pool | lowest {per_pool.min():.2f} ({per_pool.idxmin()}); "
                     "below 0.75: " + (", ".join(f"{p} {c:.2f}" + ("" if n_sets is None else f" ({n_sets[p]} label sets)")
                                                 for p, c in low.items())
                                       or "none")
                     + f" | {'yes' if low.empty else 'no'} |")
    ap = iv[iv.metric == "AP"]
    for b, goal in ((30, 0.6), (100, 0.5)):
        w = ap[ap.budget == b].groupby("method").width.mean()
        ratio = w.get("default/random", np.nan) / w.get("vetted-only", np.nan)
        lines.append(f"| AP width at {b} random labels <= {goal}x the vetted-only bootstrap's | "
                     f"{w.get('default/random', np.nan):.3f} / {w.get('vetted-only', np.nan):.3f} = {ratio:.2f}x | "
                     f"{'yes' if ratio <= goal else 'no'} |")
        if not _INTERVAL_COLUMNS <= set(ap.columns):
            continue
        cells = {m: width_at_coverage(ap[(ap.method == m) & (ap.budget == b)], 0.90) for m in ("default/random", "vetted-only")}
        (_, w_def, _), (c_vo, w_vo, best_vo) = cells["default/random"], cells["vetted-only"]
        if np.isfinite(w_def) and np.isfinite(best_vo):
            said = (f"{w_def:.3f} / {w_vo:.3f} = {w_def / w_vo:.2f}x" if np.isfinite(c_vo) else
                    f"{w_def:.3f}; the vetted-only bootstrap reaches {best_vo:.2f} at most, at any width")
            lines.append(f"| ... the same at equal (90%) coverage (both widened until they cover 90%; "
                         f"the AP width-at-equal-coverage table) | {said} | "
                         f"{'yes (the baseline never covers 90%)' if not np.isfinite(c_vo) else ('yes' if w_def / w_vo <= goal else 'no')} |")
    need = labels_to_width(df[df.metric != "threshold_rule"], 0.10)
    for metric, base, goal, routes in (("AP", "vetted-only", 1 / 3, ("default/active", "default/auto")),
                                       ("precision", "PPI++", 0.6, ("default/design", "default/active", "default/auto")),
                                       ("recall", "PPI++", 0.6, ("default/design", "default/active", "default/auto"))):
        if base not in need.columns:
            continue
        sub = need.xs(metric, level="metric") if metric in need.index.get_level_values("metric") else None
        if sub is None:
            continue
        for route in routes:
            if route not in sub.columns:
                continue
            both = sub[[route, base]].dropna()
            only = sub[sub[route].notna() & sub[base].isna()]
            gm = float(np.exp(np.mean(np.log(both[route] / both[base])))) if len(both) else np.nan
            bound = (f"; {len(only)} pool(s) where only {route} reaches it within {int(df.budget.max())} labels "
                     f"(ratio below {only[route].max() / df.budget.max():.2f} there)" if len(only) else "")
            verdict = "yes" if len(both) and gm <= goal else ("not measured" if not len(both) else "no")
            if not len(both) and len(only):
                verdict = "not measured (the baseline never gets there)"
            lines.append(f"| labels to a 0.10-wide {metric} interval (coverage >= 0.85): {route} <= "
                         f"{goal:.2g}x {base} | {_fmt(gm, 2)}x (geometric mean over {len(both)} pool(s) both reach)"
                         f"{bound} | {verdict} |")
    for method in ("default/random", "default/design", "default/auto", "default/active"):
        tr = df[(df.metric == "threshold_rule") & (df.method == method)]
        if not len(tr):
            continue
        met, held = tr.met.astype(float), tr.covered.astype(float)
        too_few = int((tr.n_flagged < tr.min_flagged).sum())
        right = threshold_right(tr)
        refusals = ""
        if right.notna().all() and (met == 0).any():  # honest refusals scored: whether the floor was reachable
            refusals = (f"; right in {right.mean():.2f} of {len(tr)} (a refusal is right where no threshold "
                        f"reaches the floor: {int(((met == 0) & (right == 1)).sum())} such)")
        verdict = right.mean() >= 0.85 if refusals else held.mean() >= 0.85
        lines.append(f"| precision-floor threshold holds in >= 0.85 of label sets ({method}) | "
                     f"{held.mean():.2f} of the {int(met.sum())} sets where one was said to meet it; met in "
                     f"{met.mean():.2f} of {len(tr)}{refusals} | {'yes' if verdict else 'no'} |")
        lines.append(f"| ... never flags fewer than min_flagged ({method}) | {too_few} of {len(tr)} | "
                     f"{'yes' if too_few == 0 else 'no'} |")
    lines.append("")
    return lines


def _threshold_lines(df, methods) -> list[str]:
    """The precision-floor rule: how often a threshold was said to meet it, how often that
    threshold truly did, and whether any flagged fewer items than min_flagged."""
    tr = df[df.metric == "threshold_rule"]
    if tr.empty:
        return []
    tr = tr.assign(met=tr.met.astype(float), held=tr.covered.astype(float),  # held: NaN where not met
                   right=threshold_right(tr))
    lines = ["## The precision-floor threshold: `recalibrate(min_precision=floor, prob=0.9)`\n",
             "Per label set: `met`, a threshold was said to meet the floor (with the default `min_flagged`); "
             "`holds | met`, its true precision is at least the floor, among those; `holds`, met and holds, over "
             "all label sets (a set where none was said to meet it counts as not holding); `right`, met and "
             "holds, or none said to meet it where no candidate threshold truly reaches the floor (blank for "
             "rows that did not record it); `too few`, thresholds that flag fewer than `min_flagged` items.\n",
             "| method | budget | label sets | met | holds \\| met | holds | right | too few | median flagged |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    present = [m for m in methods if m in set(tr.method)]
    for m in present:
        for b in sorted(tr.budget.unique()):
            x = tr[(tr.method == m) & (tr.budget == b)]
            if x.empty:
                continue
            too_few = int((x.n_flagged < x.min_flagged).sum())
            lines.append(f"| {m} | {b} | {len(x)} | {x.met.mean():.2f} | {_fmt(x.held.mean(), 2)} | "
                         f"{x.held.fillna(0).mean():.2f} | {_fmt(x.right.mean(), 2) if x.right.notna().all() else ''} | "
                         f"{too_few} | {x.n_flagged.median():.0f} |")
    pooled = []
    for m in present:
        x = tr[tr.method == m]
        pooled.append(f"{m} holds in {_fmt(x.held.mean(), 2)} of the {int(x.met.sum())} sets that met it "
                      f"({x.met.mean():.2f} of {len(x)} met; {int((x.n_flagged < x.min_flagged).sum())} too few)")
    lines.append("\nPooled over pools and budgets: " + "; ".join(pooled) + ".\n")
    per_pool = tr[tr.method == "default/random"].groupby("pool").agg(
        met=("met", "mean"), holds=("held", "mean"), sets=("met", "size"))
    if len(per_pool):
        lines.append("Per pool, default/random (all budgets; holds | met, met, label sets): "
                     + ", ".join(f"{p} {_fmt(r.holds, 2)}, {r.met:.2f}, {int(r.sets)}" for p, r in per_pool.iterrows())
                     + ".\n")
    return lines


def _fmt(x, nd=3):
    return "" if not np.isfinite(x) else f"{x:.{nd}f}"


def write_report(df: pd.DataFrame, out: pathlib.Path, header: str) -> str:
    methods = [m for m in ("vetted-only", "PPI++", "default/random", "default/design", "default/active", "default/auto",
                           "logistic/random", "monotone/random", "logistic/design", "monotone/design")
               if m in set(df.method)]
    lines = [header, ""]
    per = df.groupby(["pool", "method"])["set"].nunique().unstack("method")
    cols = [m for m in ("default/random", "default/design", "default/active", "default/auto") if m in per.columns]
    lines.append(f"Label sets per pool ({' / '.join(cols)}): "
                 + ", ".join(f"{p} " + "/".join(str(int(r[c])) if np.isfinite(r[c]) else "0" for c in cols)
                             for p, r in per.iterrows())
                 + f" ({' / '.join(str(int(per[c].sum())) for c in cols)} in all). Fewer than the 20 the full run makes: read the coverages "
                 "below with their Monte Carlo error in mind (a cell pooled over 30 intervals has a standard "
                 "error of about 0.05 at 90%).\n")
    lines.append("## Coverage and mean width of the 90% intervals, pooled over pools\n")
    for metric_kind in ("AP", "P@", "precision", "recall"):
        sub = df[df.metric.str.startswith(metric_kind)] if metric_kind == "P@" else df[df.metric == metric_kind]
        if sub.empty:
            continue
        lines.append(f"### {metric_kind if metric_kind != 'P@' else 'P@K (K = 1% of N)'}\n")
        lines.append("| method | " + " | ".join(f"{b} labels" for b in sorted(sub.budget.unique())) + " |")
        lines.append("|---|" + "---:|" * sub.budget.nunique())
        for m in methods:
            s = sub[sub.method == m]
            if s.empty:
                continue
            cells = []
            for b in sorted(sub.budget.unique()):
                x = s[s.budget == b]
                cells.append(f"{x.covered.mean():.2f} / {x.width.mean():.3f}" if len(x) else "")
            lines.append(f"| {m} | " + " | ".join(cells) + " |")
        lines.append("\ncoverage / mean width; NaN intervals (no interval possible, e.g. no flagged vetted item) "
                     "are left out of both.\n")
    # width ratio against vetted-only at 30 and 100 random labels (AP)
    ap = df[df.metric == "AP"]
    lines.append("## AP: width against the vetted-only bootstrap (same label sets)\n")
    lines.append("| pool | budget | vetted-only | default/random | ratio | default/design | default/active | "
                 "coverage random / design / active |")
    lines.append("|---|---:|---:|---:|---:|---:|---:|---|")
    for (pool, b), s in ap.groupby(["pool", "budget"]):
        if b not in (30, 100):
            continue
        w = s.groupby("method").width.mean()
        c = s.groupby("method").covered.mean()
        ratio = w.get("default/random", np.nan) / w.get("vetted-only", np.nan)
        lines.append(f"| {pool} | {b} | {_fmt(w.get('vetted-only', np.nan))} | {_fmt(w.get('default/random', np.nan))} | "
                     f"{_fmt(ratio, 2)} | {_fmt(w.get('default/design', np.nan))} | "
                     f"{_fmt(w.get('default/active', np.nan))} | {_fmt(c.get('default/random', np.nan), 2)} / "
                     f"{_fmt(c.get('default/design', np.nan), 2)} / {_fmt(c.get('default/active', np.nan), 2)} |")
    for b in (30, 100):
        s = ap[ap.budget == b]
        w = s.groupby("method").width.mean()
        lines.append(f"\nPooled at {b} labels: default/random {w.get('default/random', np.nan):.3f} against "
                     f"vetted-only {w.get('vetted-only', np.nan):.3f} "
                     f"(ratio {w.get('default/random', np.nan) / w.get('vetted-only', np.nan):.2f}); "
                     f"default/design {w.get('default/design', np.nan):.3f}, default/active "
                     f"{w.get('default/active', np.nan):.3f}.")
    lines.append("")
    lines += _equal_coverage_lines(df)
    lines += _paired_active_lines(df)
    lines += _threshold_lines(df, methods)
    lines += _targets_lines(df)
    for width in WIDTHS:
        need = labels_to_width(df, width)
        lines.append(f"## Labels to a mean interval width of {width:.2f} at coverage >= {COVERAGE_FLOOR:.0%}\n")
        lines.append("Interpolated on the budget grid; blank: not reached within it.\n")
        cols = [m for m in methods if m in need.columns]
        lines.append("| pool | metric | " + " | ".join(cols) + " |")
        lines.append("|---|---|" + "---:|" * len(cols))
        for (pool, metric), r in need.iterrows():
            if metric.startswith("P@") or metric not in ("AP", "precision", "recall"):
                continue
            lines.append(f"| {pool} | {metric} | " + " | ".join(_fmt(r.get(c, np.nan), 0) for c in cols) + " |")
        lines.append("")
    text = "\n".join(lines) + "\n"
    out.write_text(text)
    return text


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=20)
    ap.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    ap.add_argument("--pools", default=None, help="comma-separated pool names (default: all)")
    ap.add_argument("--csv", default=None, help="rows file (default: next to --out)")
    ap.add_argument("--out", default="benchmarks/results/label_efficiency.md")
    ap.add_argument("--report", nargs="+", default=None, help="write the tables from these rows files only")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--first-set", type=int, default=0, help="number of the first label set (to split a run)")
    ap.add_argument("--routes", default=",".join(ROUTES),
                    help="which labelling routes to run: random (with vetted-only, PPI++ and the candidates), "
                         "design, active (greedy expected change), auto (expected change + exploration)")
    ap.add_argument("--saturated", choices=("apart", "merged"), default="apart",
                    help="the default's curves' feature for exact 0/1 probabilities: apart (today's) or merged "
                         "(the former map, clipped at 1e-7: to measure the change on the same label sets)")
    ap.add_argument("--flat", action="store_true",
                    help="the default's candidates plus the flat-ended monotone curve "
                         "(Calibration('monotone', asymptotes=True)): the rows named default/... are that stack's")
    args = ap.parse_args(argv)
    if args.flat:
        from bayeval.models import Calibration
        EXTRA_CANDIDATES[:] = [Calibration("monotone", asymptotes=True)]
    if args.saturated != "apart":  # every Calibration the default builds gets the former feature
        from bayeval.models import Calibration
        Calibration.__init__.__kwdefaults__["saturated"] = args.saturated
    out = pathlib.Path(args.out)
    cmd = "python benchmarks/label_efficiency.py " + " ".join(argv if argv is not None else sys.argv[1:])
    header_base = ("# Label efficiency: labels to an honest interval of a given width\n\n"
                   "Real classifiers' cross-validated scores (the pools of `benchmarks/real_scores.py`); each "
                   "method's 90% interval against the pool's true value. Random label sets are nested; "
                   "`default/design` is `bayeval.active.design` for the whole budget; `default/active` is a "
                   "designed first batch of 20 then expected change of AP. PPI++ covers the metrics that are means "
                   "(precision, and recall as a ratio of means).")
    if args.report:
        df = pd.concat([pd.read_csv(p, skiprows=1) for p in args.report], ignore_index=True)
        stamp = "; ".join(sorted(set(open(p).readline().strip("# \n") for p in args.report)))
        text = write_report(df, out, f"{header_base}\n\nRows made by: {stamp}\n\nTables by `{cmd}`.")
        print(text)
        return 0
    t0 = time.time()
    if args.quick:
        pools = [p for p in R.make_pools(["breast_cancer_logreg"]) if p.name == "breast_cancer_logreg"]
        budgets, n_sets = [20, 30], 2
    else:
        pools = R.make_pools() + R.make_heldout_pools()
        if args.pools:
            want = args.pools.split(",")
            pools = [p for p in pools if p.name in want]
        budgets, n_sets = args.budgets, args.sets
    routes = tuple(args.routes.split(","))
    if set(routes) - set(ROUTES):
        raise SystemExit(f"--routes: unknown {sorted(set(routes) - set(ROUTES))}; choose among {', '.join(ROUTES)}")
    csv = pathlib.Path(args.csv) if args.csv else out.with_suffix(".csv")
    stamp = f"`{cmd}` with {R._versions()}"
    with open(csv, "w") as fh:  # rows are appended set by set: an interrupted run keeps what it made
        fh.write(f"# {stamp}\n")
    header = True
    first = 0 if args.quick else args.first_set
    for pool in pools:
        print(f"{pool.name}: N={pool.scores.size} prevalence={pool.truth.mean():.3f}", flush=True)
    for rep in range(first, first + n_sets):  # every pool gets set k before any gets set k + 1
        for pool in pools:
            rows = run_pool(pool, budgets, 1, seed=args.seed, first_set=rep, routes=routes)
            pd.DataFrame(rows).to_csv(csv, mode="a", header=header, index=False)
            header = False
    df = pd.read_csv(csv, skiprows=1)
    print(f"{time.time() - t0:.0f} s")
    text = write_report(df, out, f"{header_base}\n\nMade by {stamp}.")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
