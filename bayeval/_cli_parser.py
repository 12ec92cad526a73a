"""The ``bayeval`` command's arguments: one argparse parser for every subcommand, with the
options that several subcommands share (the scores file's columns, the model, the label store,
the table format, a saved fit). :func:`build_parser` is given the functions that run the
subcommands (they live in :mod:`bayeval.cli`)."""

from __future__ import annotations

import argparse

from .core._defaults import HDI_PROB

__all__ = ["METRIC_CHOICES", "build_parser", "data_args", "store_arg", "model_args", "seed_args", "memory_arg",
           "format_arg", "save_args", "compare_parser", "vet_parser",
           "repair_parser"]

METRIC_CHOICES = (
    "average_precision",
    "roc_auc",
    "precision_at_k",
    "recall_at_k",
    "precision",
    "recall",
    "f_score",
    "accuracy",
)


def data_args(p: argparse.ArgumentParser, *, need_label: bool = True) -> None:
    p.add_argument("scores", help="CSV or Parquet file, one row per item")
    p.add_argument("--score", required=True, help="column of classifier scores")
    p.add_argument("--label", required=need_label, default=None, help="column of vetted labels (1/0, empty = not vetted)")
    p.add_argument("--noisy-label", default=None, help="column of noisy labels (1/0), for the label-flip model")
    p.add_argument("--category", default=None, help="column of categories (tags, classes)")
    p.add_argument("--prediction", default=None, help="column of hard 0/1 predictions")
    p.add_argument("--id", dest="item_id", default=None, help="column of unique item ids (default: row number; a label store's ids "
                        "found in a column of the file are refused with `give --id COL`)")


def store_arg(p: argparse.ArgumentParser, *, prefix: str = "") -> None:
    p.add_argument("--store", default=None,
                   help=f"{prefix}a label store (made by `bayeval select --store`, filled by `bayeval label` or "
                        "`bayeval vet`): its labels are used over the --label column's (read only; --label "
                        "may then be left out)")


def model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        choices=("default", "score_mixture", "label_flip"),
        default=None,
        help="default (calibration curves learned from the vetted labels, weighted by how well each "
        "predicts them; the validated default), score_mixture (SPE: needs families that fit the "
        "scores) or label_flip (needs --noisy-label; default when given)",
    )
    p.add_argument("--negative", default="gamma", help="score-mixture family of negatives (default gamma)")
    p.add_argument("--positive", default="truncnormal", help="score-mixture family of positives (default truncnormal)")
    p.add_argument("--transform", default="auto",
                   help="the default model's score feature (auto, logit, standardize, logodds) or the score "
                        "mixture's map (auto, identity, minmax, logit, log); default auto")
    p.add_argument("--draws", type=int, default=1000, help="posterior draws per chain (default 1000)")
    p.add_argument("--tune", type=int, default=1000, help="tuning steps per chain (default 1000)")
    p.add_argument("--chains", type=int, default=2, help="chains (default 2)")
    seed_args(p)
    p.add_argument("--no-progress", action="store_true", help="hide the sampler's progress bar")
    memory_arg(p)


def seed_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--random-seed", type=int, default=None, help="random seed (default 0)")


def memory_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-memory-gb", type=float, default=None,
                   help="refuse, before fitting, a job whose estimated peak memory is above this many GB "
                        "(default 4, or the environment variable BAYEVAL_MAX_MEMORY_GB): the process with "
                        "PyMC (about 0.55 GB), one chunk of label draws (up to about 0.6 GB, growing with the "
                        "items) and what is kept per draw and vetted label; about 1.2 GB for 100,000 items")


def format_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", dest="table_format", choices=("table", "csv", "md"), default="table",
                   help="how the table is printed: table (fits the terminal, 80 columns when piped; "
                        "each interval as one [lo, hi] column), csv (every column, full precision, alone on "
                        "stdout: compare's column 'table' says ranking or pairs) or md (Markdown, for logs)")


def save_args(p: argparse.ArgumentParser, *, from_fit: bool = False) -> None:
    p.add_argument("--save", metavar="FIT.nc", default=None,
                   help="also save the fit to this netCDF file (bayeval.load and arviz.from_netcdf read it)")
    p.add_argument("--overwrite", action="store_true", help="let --save replace an existing file")
    if from_fit:
        p.add_argument("--from-fit", metavar="FIT.nc", default=None,
                       help="render from a fit saved with --save instead of fitting again (no sampling); "
                       "it must have been made on the card's data")


def compare_parser(sub, run) -> None:
    """The `compare` command's arguments."""
    cmpp = sub.add_parser("compare", help="which classifier is better: paired gaps on the same label draws",
                          description="Compare classifiers that scored the same items on the same draws of the "
                                      "items' labels: each one's metric with P(best), and every pair's gap with "
                                      "its HDI and P(better). Give two or more model cards (joined on their item "
                                      "ids; their vetted labels pooled), or one scores file with one score column "
                                      "per classifier (--score A B --label COL).")
    cmpp.add_argument("inputs", nargs="+", metavar="CARD_OR_SCORES",
                      help="two or more model-card folders that scored the same items, or one CSV or Parquet "
                           "file (one row per item) with --score")
    cmpp.add_argument("--score", nargs="+", default=None,
                      help="with a scores file: the score columns to compare (two or more)")
    cmpp.add_argument("--label", default=None,
                      help="with a scores file: column of vetted labels (1/0, empty = not vetted)")
    cmpp.add_argument("--id", dest="item_id", default=None,
                      help="with a scores file: column of unique item ids (default: row number)")
    store_arg(cmpp, prefix="with a scores file: ")
    cmpp.add_argument("--metric", choices=("average_precision", "roc_auc", "precision_at_k", "recall_at_k"),
                      default="average_precision", help="the metric compared (default average_precision)")
    cmpp.add_argument("--k", type=int, nargs=1, default=[100], help="k for precision_at_k/recall_at_k (default 100)")
    cmpp.add_argument("--category-mode", choices=("pooled", "mean"), default="pooled",
                      help="cards with categories: the metric over all items pooled (default, as their reports' "
                           "metrics table) or the mean over categories")
    cmpp.add_argument("--width", type=float, default=None,
                      help="half-width of the region of practical equivalence: adds P(|gap| <= width)")
    cmpp.add_argument("--hdi-prob", type=float, default=HDI_PROB, help=f"HDI probability (default {HDI_PROB:g})")
    cmpp.add_argument("--draws", type=int, default=1000, help="posterior draws per chain (default 1000)")
    cmpp.add_argument("--chains", type=int, default=2, help="chains (default 2)")
    seed_args(cmpp)
    cmpp.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    memory_arg(cmpp)
    cmpp.add_argument("--out", default=None, help="also write the pairs' table to this CSV file")
    format_arg(cmpp)
    cmpp.set_defaults(func=run)


def vet_parser(sub, run) -> None:
    """The `vet` command's arguments."""
    vet = sub.add_parser("vet", help="a local web page to vet the items the posterior asks for",
                         description="Serve a web page (on 127.0.0.1) that shows the next item to vet of a "
                                     "model card -- its image or text, category and score -- takes yes / no / "
                                     "skip / undo (buttons or the keys y n s u), writes every answer to the "
                                     "label store before acknowledging it, and shows the card's metric with "
                                     "its credible interval after each background refit. Several browsers "
                                     "may vet at once (each item goes to one of them); a second server on a "
                                     "store that a running server uses is refused. Reopen with the same "
                                     "card or store to resume. With two cards (CARD_A CARD_B), the page vets "
                                     "for their comparison: the gap and P(A better) after each refit, the "
                                     "items that would move the comparison most. Needs the extra: "
                                     "pip install -e \".[vet]\".")
    vet.add_argument("target", metavar="CARD_OR_STORE", nargs="+",
                     help="a model-card folder (its [vet] table says what to show), or a store it wrote; or two "
                          "card folders that scored the same items, to vet for their comparison (the page shows "
                          "the gap and P(A better); the first card's items, metric and settings)")
    vet.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free port)")
    vet.add_argument("--host", default=None,
                     help="address to listen on (default 127.0.0.1, this machine only); another one makes the "
                          "page reachable from other machines (a warning is printed)")
    vet.add_argument("--store", default=None,
                     help="label store file (default: the card's [vet] store; two cards: vet-compare-Y.sqlite in "
                          "X's folder, X and Y their folder names sorted, the same for either order)")
    vet.add_argument("--annotator", default=None, help="who answers (a name typed on the page wins)")
    vet.add_argument("--batch-size", type=int, default=None, help="items per batch (default: the card's)")
    vet.add_argument("--budget", type=int, default=None, help="how many vetted items you plan (default: the card's)")
    vet.add_argument("--draws", type=int, default=None, help="draws per chain of each refit (default: the card's)")
    vet.add_argument("--tune", type=int, default=None, help="tuning steps of each refit (default: the card's)")
    vet.add_argument("--width", type=float, default=None,
                     help="a comparison: half-width of the region of practical equivalence of the gap (adds "
                          "P(|gap| <= width); default: the store's, else none)")
    vet.add_argument("--token", default=None,
                     help="the session token the page's URL carries: at least 16 characters (default: a new "
                          "random one)")
    vet.set_defaults(func=run)


def build_parser(commands) -> argparse.ArgumentParser:
    """The ``bayeval`` command's parser; ``commands`` maps each subcommand's name to the
    function that runs it (set as the parsed arguments' ``func``)."""
    parser = argparse.ArgumentParser(
        prog="bayeval",
        description="Bayesian evaluation of classifiers when labels are scarce or noisy.",
        epilog="Inputs are CSV or Parquet files, one row per item. BAYEVAL_DEBUG=1 shows tracebacks.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    rep = sub.add_parser("report", help="render a model card's report (HTML + Markdown + PNG)",
                         description="Fit the card's model and write its credible-interval report (or render it "
                                     "from a fit kept with --save: --from-fit FIT.nc, no sampling).")
    rep.add_argument("card", nargs="+",
                     help="a model-card folder (with card.toml), e.g. models/breast_cancer_logreg; several cards are "
                          "fitted as tasks with --workers/--scheduler, each report written to CARD/report")
    rep.add_argument("--out", default=None, help="output folder (default CARD/report)")
    rep.add_argument("--draws", type=int, default=None, help="override the card's draws per chain")
    rep.add_argument("--tune", type=int, default=None, help="override the card's tuning steps")
    rep.add_argument("--chains", type=int, default=None, help="override the card's chains")
    rep.add_argument("--no-progress", action="store_true", help="hide the sampler's progress bar")
    rep.add_argument("--quiet", action="store_true",
                     help="no progress messages on stderr (implies --no-progress)")
    rep.add_argument("--store", default=None,
                     help="read the vetted labels from this label store (read only) instead of the card's [vet] "
                          "store: the one `bayeval vet CARD --store FILE` wrote; a store written for another card "
                          "is refused")
    rep.add_argument("--allow-outside", action="store_true",
                     help="let the card read a data file outside its folder (off by default)")
    from ._cli_cluster import cluster_args

    cluster_args(rep)
    memory_arg(rep)
    save_args(rep, from_fit=True)
    format_arg(rep)
    rep.set_defaults(func=commands["report"])

    fit = sub.add_parser("fit", help="fit a model and print the metric summary table",
                         description="Fit a model to SCORES and print mean, sd and HDI of each metric.")
    data_args(fit, need_label=False)
    store_arg(fit)
    model_args(fit)
    fit.add_argument("--metric", nargs="+", choices=METRIC_CHOICES, default=["average_precision", "roc_auc"],
                     help="metrics to summarize (default: average_precision roc_auc)")
    fit.add_argument("--k", type=int, nargs="+", default=[10, 100], help="k for precision_at_k/recall_at_k")
    fit.add_argument("--threshold", type=float, default=None, help="score cut-off for precision/recall/f_score/accuracy")
    fit.add_argument("--category-mode", choices=("each", "mean", "pooled"), default="each",
                     help="with --category: per category, their mean, or pooled")
    fit.add_argument("--hdi-prob", type=float, default=HDI_PROB, help=f"HDI probability (default {HDI_PROB:g})")
    fit.add_argument("--out", default=None, help="also write the table to this CSV file")
    fit.add_argument("--per-category", action="store_true",
                     help="with --category: fit each category separately (no pooling across them), one table "
                          "row per category and metric; the fits run as tasks with --workers/--scheduler")
    from ._cli_cluster import cluster_args

    cluster_args(fit)
    save_args(fit)
    format_arg(fit)
    fit.set_defaults(func=commands["fit"])

    compare_parser(sub, commands["compare"])

    thr = sub.add_parser("threshold", help="the threshold meeting precision/recall constraints",
                         description="Recommend the score threshold with the highest probability that the "
                                     "constraints hold on this data.")
    data_args(thr, need_label=False)
    store_arg(thr)
    model_args(thr)
    thr.add_argument("--min-precision", type=float, default=None, help="required precision")
    thr.add_argument("--min-recall", type=float, default=None, help="required recall")
    thr.add_argument("--prob", type=float, default=None,
                     help="the probability the constraint must hold with, e.g. 0.95: then the threshold with "
                     "the highest expected recall among those that meet it (default: the most probable)")
    thr.add_argument("--min-flagged", type=int, default=None,
                     help="never recommend a threshold that flags fewer items (default: the larger of 10 and 1%% "
                     "of the items, at most a tenth of the expected positives; 0 allows any)")
    thr.add_argument("--table", action="store_true",
                     help="also print the per-threshold table, one row per candidate threshold (the distinct scores, "
                          "at most about 400): the probability the constraint holds, the items flagged, whether it "
                          "may be recommended (eligible), and precision and recall (mean, sd, HDI as one [lo, hi] "
                          "column; --format csv: both bounds, full precision)")
    format_arg(thr)
    thr.set_defaults(func=commands["threshold"])

    sel = sub.add_parser("select", help="the next items to vet",
                         description="Print the next items to vet, best first: a first batch stratified on the "
                                     "score while (almost) nothing is vetted, then the items whose labels would "
                                     "move the estimate most (the model is fitted for those).")
    data_args(sel, need_label=False)
    model_args(sel)
    sel.add_argument("--size", type=int, required=True, help="how many items")
    sel.add_argument("--strategy", default="auto",
                     choices=("auto", "design", "expected_change", "uncertainty", "most_confident_mistake", "random"),
                     help="auto (default): a batch stratified on the score while fewer items are vetted than --size "
                          "(no fit needed), then expected_change for three quarters of each batch and, for the "
                          "last quarter, items from the strata of that design with the fewest vetted items")
    sel.add_argument("--metric", default="average_precision",
                     choices=("average_precision", "precision_at_k", "recall_at_k", "roc_auc"),
                     help="the metric whose estimate the chosen items should sharpen (default average_precision)")
    sel.add_argument("--k", type=int, nargs=1, default=[10], help="k for precision_at_k/recall_at_k (default 10)")
    sel.add_argument("--store", default=None, help="a label store: its labels are applied, and the batch is recorded")
    sel.add_argument("--new-batch", action="store_true",
                     help="propose a new batch even if the last one is unfinished: its unlabeled items are left out "
                          "of the new one (no item is proposed twice) and are no longer listed as pending here; they "
                          "stay in their batch, `bayeval vet` still offers them, and `bayeval label` takes their "
                          "labels at any time")
    format_arg(sel)
    sel.set_defaults(func=commands["select"])

    lab = sub.add_parser("label", help="record labels from a CSV into a label store",
                         description="Append labels (item id, 0/1) from a CSV or Parquet file to a label store. "
                                     "Labels are 1 or 0 (also 1.0/0.0 and true/false in any case); anything "
                                     "else (NA, n/a, null, yes, an empty cell) is rejected with its line. "
                                     "Item ids are read as text ('007' and '7' differ) and checked against "
                                     "the items the store knows (from `bayeval select --store`, or --scores "
                                     "once): an unknown id is rejected with a 'did you mean'. Valid rows are "
                                     "recorded even when others are rejected; importing the same file "
                                     "again adds nothing (a label equal to the annotator's latest label "
                                     "for that item is not added again).")
    lab.add_argument("store", help="label store file (created if missing)")
    lab.add_argument("labels", help="CSV or Parquet file with the labels")
    lab.add_argument("--id", dest="item_id", default="item", help="column of item ids (default 'item')")
    lab.add_argument("--label", default="label", help="column of 0/1 labels (default 'label')")
    lab.add_argument("--annotator", default=None, help="who labeled")
    lab.add_argument("--batch", type=int, default=None, help="the batch these labels answer")
    lab.add_argument("--scores", default=None,
                     help="the scores file, to reject unknown item ids (the store remembers its items)")
    lab.add_argument("--score", default=None, help="with --scores: its score column")
    lab.add_argument("--scores-id", default=None,
                     help="with --scores: its id column (default: same as --id; a scores file without that column "
                          "is numbered by row, 0, 1, ..., as select numbers it)")
    lab.set_defaults(func=commands["label"])

    exp = sub.add_parser("export-labels", help="save the readable label rows of a (damaged) store to CSV",
                         description="Save every label row that can still be read from a label store "
                                     "(for example a damaged one) to a CSV file; the store is not changed.")
    exp.add_argument("store", help="label store file")
    exp.add_argument("out", help="CSV file to write (must not exist)")
    exp.set_defaults(func=commands["export-labels"])

    repair_parser(sub, commands["repair-store"])
    vet_parser(sub, commands["vet"])

    demo = sub.add_parser("demo", help="credible-interval summary of the bundled example")
    demo.add_argument("--draws", type=int, default=1000, help="posterior draws per chain (default 1000)")
    demo.add_argument("--chains", type=int, default=2, help="chains (default 2)")
    seed_args(demo)
    demo.add_argument("--hdi-prob", type=float, default=HDI_PROB, help=f"HDI probability (default {HDI_PROB:g})")
    demo.set_defaults(func=commands["demo"])
    return parser


def repair_parser(sub, run) -> None:
    """The `repair-store` command's arguments."""
    fix = sub.add_parser("repair-store", help="set aside the labels of unknown item ids in a label store",
                         description="Take the labels of item ids that are not in the scores file (typos) "
                                     "out of a label store, keeping every label: those rows are written to "
                                     "a CSV beside the store (STORE.set-aside-TIME.csv) and a copy of the store "
                                     "as it was is kept as STORE.before-repair-TIME; every other label, batch "
                                     "and setting is kept as it was. Other programs (bayeval vet, bayeval "
                                     "label) may use the store meanwhile: their writes wait for the repair "
                                     "and land in the repaired store. A repair that would keep no label, "
                                     "or of a scores file sharing no item with the store, is refused (that is "
                                     "mostly a wrong --id: the message names the right one) unless --force.")
    fix.add_argument("store", help="label store file")
    fix.add_argument("--scores", default=None,
                     help="the scores file the store is for (default: the items the store knows)")
    fix.add_argument("--score", default=None, help="with --scores: its score column")
    fix.add_argument("--id", dest="item_id", default=None,
                     help="with --scores: its column of item ids (default: row number, as in select)")
    fix.add_argument("--force", action="store_true",
                     help="repair even when every label would be set aside, or when the scores file shares no "
                          "item with the store (refused otherwise, as that is mostly a wrong --id); the labels "
                          "set aside are kept in the CSV and the backup as always")
    fix.set_defaults(func=run)
