import numpy as np
import pandas as pd
import pytest

from bayeval import EvalData


def test_basic_properties_and_counts():
    d = EvalData(
        [0.9, 0.1, 0.5, 0.7],
        [1, 0, np.nan, np.nan],
        noisy_labels=[1, 0, 1, 0],
        predictions=[1, 0, 1, 1],
        categories=["b", "a", "b", "a"],
        features=np.arange(8.0).reshape(4, 2),
        item_ids=["w", "x", "y", "z"],
    )
    assert d.n_items == len(d) == 4
    assert d.vetted.tolist() == [True, True, False, False]
    assert (d.n_vetted, d.n_unvetted, d.n_vetted_positive, d.n_vetted_negative) == (2, 2, 1, 1)
    assert d.category_names.tolist() == ["a", "b"]
    assert d.categories.tolist() == ["b", "a", "b", "a"]
    c = d.counts()
    assert c.loc["a", "items"] == 2 and c.loc["b", "vetted_positive"] == 1
    assert c.loc["total", "noisy_positive"] == 2
    assert "categories=2" in repr(d)


def test_immutable():
    d = EvalData([0.1, 0.2], [1, np.nan])
    with pytest.raises(ValueError):
        d.scores[0] = 5.0
    with pytest.raises(ValueError):
        d.labels[1] = 1.0
    with pytest.raises(AttributeError, match="immutable"):
        d.foo = 1


def test_with_labels_returns_new_object_and_guards_conflicts():
    d = EvalData([0.1, 0.2, 0.3], [1, np.nan, np.nan], item_ids=["a", "b", "c"])
    d2 = d.with_labels(["c", "b"], [0, 1])
    assert np.isnan(d.labels[1]) and d2.labels.tolist() == [1, 1, 0]
    assert d2.with_labels(["a"], [1]).labels.tolist() == [1, 1, 0]  # same value: fine
    with pytest.raises(ValueError, match="already vetted with a different label"):
        d2.with_labels(["a"], [0])
    assert d2.with_labels(["a"], [0], overwrite=True).labels[0] == 0
    with pytest.raises(ValueError, match="not in this EvalData"):
        d.with_labels(["nope"], [1])
    with pytest.raises(ValueError, match="1 \\(positive\\), 0"):
        d.with_labels(["a"], [2])
    with pytest.raises(ValueError, match="conflicting labels in one call"):
        d.with_labels(["b", "b"], [0, 1])
    with pytest.raises(ValueError, match="one value per item"):
        d.with_labels(["b", "c"], [1])


def test_int_ids_lookup_with_float_ids():
    d = EvalData([0.1, 0.2, 0.3], item_ids=[10, 20, 30])
    assert d.index_of([30.0, 10]).tolist() == [2, 0]


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"scores": [0.1, np.nan]}, ValueError, "finite"),
        ({"scores": [0.1, np.inf]}, ValueError, "finite"),
        ({"scores": []}, ValueError, "empty"),
        ({"scores": [[0.1, 0.2]]}, ValueError, "1-D"),
        ({"scores": ["a", "b"]}, TypeError, "numbers"),
        ({"scores": [0.1, 0.2], "labels": [1]}, ValueError, "has 1 item"),
        ({"scores": [0.1, 0.2], "labels": [1, 2]}, ValueError, "1 \\(positive\\)"),
        ({"scores": [0.1, 0.2], "labels": [1, -1]}, ValueError, "such as -1"),
        ({"scores": [0.1, 0.2], "noisy_labels": [1, np.nan]}, ValueError, "fully known"),
        ({"scores": [0.1, 0.2], "predictions": [1, 0, 1]}, ValueError, "`predictions` has 3"),
        ({"scores": [0.1, 0.2], "item_ids": ["a", "a"]}, ValueError, "unique"),
        ({"scores": [0.1, 0.2], "categories": [["a"], ["b"]]}, ValueError, "1-D"),
        ({"scores": [0.1, 0.2], "categories": ["a"]}, ValueError, "has 1 item"),
        ({"scores": [0.1, 0.2], "categories": np.array(["a", None], dtype=object)}, ValueError, "missing"),
        ({"scores": [0.1, 0.2], "features": np.ones((3, 2))}, ValueError, "3 row"),
        ({"scores": [0.1, 0.2], "features": np.ones((2, 2, 2))}, ValueError, "2-D"),
        ({"scores": [0.1, 0.2], "features": [[1.0], [np.nan]]}, ValueError, "NaN or infinite"),
    ],
)
def test_bad_input_is_rejected_with_a_clear_message(kwargs, exc, match):
    scores = kwargs.pop("scores")
    labels = kwargs.pop("labels", None)
    with pytest.raises(exc, match=match):
        EvalData(scores, labels, **kwargs)


def test_a_nan_noisy_label_or_prediction_is_named_by_its_item():
    """`EvalData(noisy_labels=[1, nan, ...])` said "2 value(s) are NaN" and no more: which items, the
    Python user had to search (the CLI names the file's lines)."""
    s = np.linspace(0.1, 0.9, 8)
    noisy = np.array([1, np.nan, 0, 0, np.nan, 1, 0, np.nan])
    with pytest.raises(ValueError, match=r"`noisy_labels` must be fully known .* 3 value\(s\) are NaN "
                                         r"\(positions 1, 4, 7\)"):
        EvalData(s, noisy_labels=noisy)
    ids = [f"doc{j}" for j in range(8)]
    with pytest.raises(ValueError, match=r"3 value\(s\) are NaN \(item ids 'doc1', 'doc4', 'doc7'\)"):
        EvalData(s, noisy_labels=noisy, item_ids=ids)
    many = np.where(np.arange(8) > 0, np.nan, 1.0)
    with pytest.raises(ValueError, match=r"`predictions` .* 7 value\(s\) are NaN \(item ids 11, 12, 13, 14, 15, "
                                         r"\.\.\.\)"):
        EvalData(s, predictions=many, item_ids=np.arange(10, 18))


def test_from_frame_and_back():
    df = pd.DataFrame(
        {
            "score": [0.2, 0.8, 0.5],
            "y": pd.array([pd.NA, 1, 0], dtype="Int64"),
            "tag": [1, 1, 0],
            "cat": ["x", "y", "x"],
            "size": [1.0, 2.0, 3.0],
            "id": ["p", "q", "r"],
        }
    )
    d = EvalData.from_frame(df, score="score", label="y", noisy_label="tag", category="cat", features=["size"], item_id="id")
    assert d.n_vetted == 2 and d.item_ids.tolist() == ["p", "q", "r"]
    assert d.feature_names.tolist() == ["size"]
    ds = d.to_xarray()
    assert ds["score"].dims == ("item",) and ds["features"].dims == ("item", "feature")
    assert ds["category"].values.tolist() == ["x", "y", "x"]
    back = d.to_frame()
    assert back.loc["q", "label"] == 1 and back.loc["r", "size"] == 3.0
    with pytest.raises(ValueError, match="not a column"):
        EvalData.from_frame(df, score="nope")
    with pytest.raises(ValueError, match="does not have"):
        EvalData.from_frame(df, score="score", features=["size", "weight"])
    with pytest.raises(TypeError, match="DataFrame"):
        EvalData.from_frame({"score": [1]}, score="score")


def test_subset_keeps_metadata():
    d = EvalData([0.1, 0.5, 0.9], [1, np.nan, 0], categories=["a", "b", "a"], item_ids=["x", "y", "z"])
    sub = d.subset(d.vetted)
    assert sub.item_ids.tolist() == ["x", "z"] and sub.category_names.tolist() == ["a", "b"]
    assert sub.categories.tolist() == ["a", "a"]
    with pytest.raises(ValueError, match="empty"):
        d.subset(np.zeros(3, dtype=bool))


def test_boolean_labels_warn_that_every_item_counts_as_vetted():
    """`EvalData(s, y > 0.5)` with NaN (not vetted) in `y` turned every NaN into a vetted negative
    (NaN > 0.5 is False) without a word: 300 vetted instead of 40. A boolean array now warns, naming
    the float form that keeps NaN; float labels (with or without NaN) and pandas' nullable
    `boolean` (which holds pd.NA) are read silently."""
    import warnings

    rng = np.random.default_rng(0)
    s = rng.random(300)
    y = np.where(np.arange(300) < 40, (rng.random(300) < s).astype(float), np.nan)
    with pytest.warns(UserWarning, match=r"boolean array, so all 300 items count as vetted") as rec:
        d = EvalData(s, y > 0.5)
    assert d.n_vetted == 300  # still read (every item vetted is a valid set), but said
    msg = str(rec[0].message)
    assert "np.where(np.isnan(y), np.nan, y > 0.5)" in msg and "labels.astype(float)" in msg
    assert rec[0].filename == __file__  # points at the caller's line
    with pytest.warns(UserWarning, match="boolean array"):
        EvalData.from_frame(pd.DataFrame({"s": s, "b": y > 0.5}), score="s", label="b")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert EvalData(s, np.where(np.isnan(y), np.nan, y > 0.5)).n_vetted == 40
        assert EvalData(s, (y > 0.5).astype(float)).n_vetted == 300
        nullable = pd.array(np.where(np.isnan(y), None, y > 0.5), dtype="boolean")
        assert EvalData(s, nullable).n_vetted == 40
