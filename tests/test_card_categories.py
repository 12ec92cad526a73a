"""On a card whose data have categories, a metric entry without a ``category`` option is one
quantity on every surface of the card: every item pooled (the report's metrics table, the vetting
page's estimate, a report's comparison section); ``card.metrics(category=...)`` gives that reading
to ``Posterior.summary``, which alone computes per category."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bayeval.cards import load_card


def _card(folder: Path, metrics: str, vet_metric: str | None = None) -> Path:
    """Three categories whose positives sit at different score levels: the mean over categories
    and the pooled value of AP differ."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(3)
    n = 120
    cat = np.array(["a", "b", "c"])[np.arange(n) % 3]
    y = rng.random(n) < np.where(cat == "a", 0.6, 0.2)
    s = np.clip(0.25 * y + rng.random(n) * 0.7 + np.where(cat == "c", 0.2, 0.0), 0, 1)
    lab = np.where(np.arange(n) % 4 == 0, y.astype(int).astype(str), "")
    rows = "\n".join(f"i{j},{s[j]:.4f},{lab[j]},{cat[j]}" for j in range(n))
    (folder / "s.csv").write_text("id,score,label,category\n" + rows + "\n")
    vet = f'vet = {{ batch_size = 2, metric = "{vet_metric}" }}' if vet_metric else "vet = { batch_size = 2 }"
    (folder / "card.toml").write_text(f'''
title = "three categories"
description = "120 items"
data = {{ file = "s.csv", score = "score", label = "label", category = "category", id = "id" }}
model = {{ name = "calibration" }}
sampling = {{ draws = 100, tune = 100, chains = 1, random_seed = 0 }}
report = {{ metrics = {metrics} }}
{vet}
''')
    return folder


def test_card_metrics_fills_in_the_category_reading(tmp_path):
    card = load_card(_card(tmp_path / "c", '["average_precision", { name = "roc_auc", category = "mean" }]'))
    assert card.metrics() == {"average_precision": "average_precision", "roc_auc[category=mean]":
                              ("roc_auc", {"category": "mean"})}
    assert card.metrics(category="pooled") == {
        "average_precision": ("average_precision", {"category": "pooled"}),
        "roc_auc[category=mean]": ("roc_auc", {"category": "mean"})}  # an entry's own reading is kept
    with pytest.raises(ValueError, match="category"):
        card.metrics(category="all")


def test_the_vetting_page_estimates_what_the_report_s_table_shows(tmp_path):
    pytest.importorskip("starlette", reason="the vet extra: pip install -e '.[vet]'")
    from bayeval.vet import open_vet

    card = load_card(_card(tmp_path / "c", '["average_precision"]'))
    with open_vet(card, store=tmp_path / "v.sqlite", draws=100, tune=100) as v:
        assert v.wait_idle(120)
        shown = v.state()["estimate"]
        post = v.session.posterior
        pooled = float(post.metric("average_precision", category="pooled").mean())
        mean = float(post.metric("average_precision", category="mean").mean())
    assert abs(pooled - mean) > 0.02  # the two readings differ on this card
    assert shown["mean"] == pytest.approx(pooled)  # it was the mean over categories
    assert shown["label"] == "average_precision (all items pooled)"


def test_the_vetting_page_refuses_a_per_category_metric(tmp_path):
    pytest.importorskip("starlette", reason="the vet extra: pip install -e '.[vet]'")
    from bayeval.vet import open_vet

    metrics = '[{ name = "average_precision", category = "each", label = "AP each" }, ' \
              '{ name = "average_precision", category = "mean", label = "mAP" }]'
    card = load_card(_card(tmp_path / "c", metrics))
    with pytest.raises(ValueError, match=r"per category .*category = \"pooled\""):
        open_vet(card, store=tmp_path / "v.sqlite")
    card = load_card(_card(tmp_path / "d", metrics, vet_metric="mAP"))
    with open_vet(card, store=tmp_path / "w.sqlite", draws=100, tune=100) as v:
        assert v.wait_idle(120)
        assert v.state()["estimate"]["label"] == "mAP (mean over categories)"
        assert v.session.category == "mean"


CATEGORIES = ["NA", "None", "null", "nan", "EU"]  # what pandas would read as missing, but the first four


def _named_like_missing(path: Path) -> Path:
    rows = "\n".join(f"i{j},{0.1 + j / 100:.2f},{CATEGORIES[j % 5]}" for j in range(10))
    path.write_text("id,s,cat\n" + rows + "\n")
    return path


def test_a_card_s_category_named_na_is_a_category(tmp_path):
    """A category column is read as text, as the id column is: "NA" was read as a missing
    category and the card refused ("holds missing values: every item needs a category")."""
    folder = tmp_path / "card"
    folder.mkdir()
    _named_like_missing(folder / "s.csv")
    (folder / "card.toml").write_text('title = "t"\ndescription = "d"\n'
                                      'data = { file = "s.csv", score = "s", id = "id", category = "cat" }\n'
                                      'model = { name = "calibration" }\n')
    data, _ = load_card(folder).load_data()
    assert data.categories.tolist() == [CATEGORIES[j % 5] for j in range(10)]


def test_the_command_line_s_category_named_na_is_a_category(tmp_path, capsys):
    """`--category COL` of the command line: the same text reading (here `select --strategy design`,
    which prints each item's category without a fit)."""
    import io

    import pandas as pd

    from bayeval.cli import main

    path = _named_like_missing(tmp_path / "s.csv")
    assert main(["select", str(path), "--score", "s", "--id", "id", "--category", "cat", "--size", "10",
                 "--strategy", "design", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    table = pd.read_csv(io.StringIO(out), dtype=str, keep_default_na=False)
    assert dict(zip(table["item"], table["category"], strict=True)) == {f"i{j}": CATEGORIES[j % 5] for j in range(10)}
