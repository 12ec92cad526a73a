"""A metric pass that takes more than about 2 s shows a progress bar (a million items took
73 s with no sign of life); a short pass, or progressbar=False, shows nothing."""

import numpy as np
import pytest

from bayeval import EvalData, Posterior
from bayeval.core import _progress


@pytest.fixture()
def post():
    s = np.linspace(0, 1, 2000)
    return Posterior.from_probabilities(EvalData(s), s, draws=200, random_seed=0)


def test_a_slow_metric_pass_shows_a_bar(post, monkeypatch, capsys):
    monkeypatch.setattr(_progress, "DELAY", 0.0)  # every pass counts as slow
    ap = post.metric("average_precision", chunk_size=10)
    err = capsys.readouterr().err
    assert "bayeval: average_precision, 200 draws of 2000 items" in err and "100%" in err
    np.testing.assert_array_equal(ap.values, post.metric("average_precision", progressbar=False).values)
    assert capsys.readouterr().err == ""


def test_a_short_metric_pass_shows_nothing(post, monkeypatch, capsys):
    monkeypatch.setattr(_progress, "DELAY", 600.0)
    post.metric("roc_auc")
    assert capsys.readouterr().err == ""
