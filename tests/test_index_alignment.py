"""pandas inputs of one call are paired by their index, not by position: EvalData's per-item
inputs and AnnotationData's predictions, annotations, gold and scores. The same labels in
another order are put in the first input's order; other labels, or an order that cannot be
told, are a clear error. Plain arrays, and pandas objects with one index, stay as they were."""

import numpy as np
import pandas as pd
import pytest

from bayeval import EvalData
from bayeval.annotators import AnnotationData, AnnotatorError, annotations_from_long

IDS = ["img3", "img0", "img2", "img1"]
SCORES = pd.Series([0.9, 0.2, 0.7, 0.4], index=IDS)
LABELS = pd.Series([1.0, 0.0, np.nan, 1.0], index=IDS)


def shuffled(x, order=(2, 0, 3, 1)):
    return x.iloc[list(order)]


# ------------------------------------------------------------------------ EvalData


def test_evaldata_same_index_and_plain_arrays_pair_by_position():
    d = EvalData(SCORES, LABELS, predictions=pd.Series([1, 0, 1, 0], index=IDS))
    assert d.labels.tolist()[:2] == [1.0, 0.0] and d.predictions.tolist() == [1, 0, 1, 0]
    plain = EvalData(SCORES.to_numpy(), shuffled(LABELS).to_numpy())
    np.testing.assert_array_equal(plain.labels, shuffled(LABELS).to_numpy())
    one = EvalData(SCORES.to_numpy(), shuffled(LABELS))  # a single pandas input: nothing to pair it with
    np.testing.assert_array_equal(one.labels, shuffled(LABELS).to_numpy())


def test_evaldata_pairs_every_per_item_input_by_label_in_another_order():
    feats = pd.DataFrame({"size": [3.0, 0.0, 2.0, 1.0]}, index=IDS)
    d = EvalData(
        SCORES,
        shuffled(LABELS),
        noisy_labels=shuffled(pd.Series([1, 0, 0, 1], index=IDS), (3, 1, 0, 2)),
        predictions=shuffled(pd.Series([1, 0, 1, 0], index=IDS), (1, 2, 3, 0)),
        categories=shuffled(pd.Series(["x", "y", "x", "y"], index=IDS)),
        features=shuffled(feats, (3, 2, 1, 0)),
        item_ids=shuffled(pd.Series(IDS, index=IDS), (1, 3, 0, 2)),
    )
    assert d.scores.tolist() == SCORES.tolist()
    np.testing.assert_array_equal(d.labels, LABELS.to_numpy())
    assert d.noisy_labels.tolist() == [1, 0, 0, 1] and d.predictions.tolist() == [1, 0, 1, 0]
    assert d.categories.tolist() == ["x", "y", "x", "y"] and d.features[:, 0].tolist() == [3.0, 0.0, 2.0, 1.0]
    assert d.item_ids.tolist() == IDS


def test_evaldata_aligned_by_label_fits_the_same_as_passed_in_order():
    a = EvalData(SCORES, shuffled(LABELS))
    b = EvalData(SCORES, LABELS)
    assert a.fingerprint() == b.fingerprint()


def test_evaldata_indexes_naming_different_items_are_an_error_that_shows_them():
    other = LABELS.rename(index={"img2": "img9"})
    with pytest.raises(ValueError, match=r"`scores` and `labels` are pandas objects whose indexes name different "
                                         r"items: 1 of the 4 ids in `scores`'s index are not in `labels`'s \('img2'\) and "
                                         r"1 of `labels`'s are not in `scores`'s \('img9'\).*labels.loc\[scores.index\].*"
                                         r"\.to_numpy\(\)"):
        EvalData(SCORES, other)
    with pytest.raises(ValueError, match=r"`scores` and `predictions` .*: 3 of the 4 ids in `scores`'s index"):
        EvalData(SCORES, predictions=pd.Series([1, 0, 1, 0], index=IDS).iloc[:1])
    with pytest.raises(ValueError, match=r"`labels`'s index repeats ids \(e.g. 'img0'\)"):
        EvalData(SCORES, pd.Series([1, 0, 1, 0], index=["img3", "img0", "img0", "img1"]))


def test_evaldata_refuses_to_guess_between_label_and_position():
    # pd.Series(values) numbers its rows 0..n-1; a shuffled frame's column holds those numbers in
    # another order: by label and by position disagree
    rows = pd.Series([1.0, 0.0, 1.0, 0.0]).sample(frac=1, random_state=1)
    with pytest.raises(ValueError, match=r"`scores` and `labels` hold the same ids in their index in another order, "
                                         r"and `scores`'s index is pandas' default 0 .. 3"):
        EvalData(pd.Series([0.9, 0.2, 0.7, 0.4]), rows)
    with pytest.raises(ValueError, match=r"`labels`'s index holds the ids of `scores`'s in another order.*"
                                         r"`predictions` is a plain array"):
        EvalData(SCORES, shuffled(LABELS), predictions=[1, 0, 1, 0])
    with pytest.raises(ValueError, match=r"`item_ids` holds the ids of `scores`'s index in another order"):
        EvalData(SCORES, item_ids=list(shuffled(SCORES).index))
    # two default indexes of different lengths: the length check speaks
    with pytest.raises(ValueError, match=r"`labels` has 3 item\(s\) but `scores` has 4"):
        EvalData(pd.Series([0.9, 0.2, 0.7, 0.4]), pd.Series([1, 0, 1]))


def test_evaldata_from_a_frame_is_unchanged():
    df = pd.DataFrame({"s": [0.3, 0.8, 0.5], "y": [np.nan, 1.0, 0.0], "f": [1.0, 2.0, 3.0], "id": ["c", "a", "b"]},
                      index=[7, 3, 5])
    d = EvalData.from_frame(df, score="s", label="y", features=["f"], item_id="id")
    assert d.item_ids.tolist() == ["c", "a", "b"] and d.features[:, 0].tolist() == [1.0, 2.0, 3.0]
    d = EvalData(df["s"], df["y"], features=df[["f"]], item_ids=df["id"])
    assert d.item_ids.tolist() == ["c", "a", "b"] and d.labels.tolist()[1:] == [1.0, 0.0]


# ------------------------------------------------------------------- AnnotationData


def _crowd(seed=0, n=60):
    rng = np.random.default_rng(seed)
    ids = [f"img{i}" for i in rng.permutation(n)]  # the user's order, not sorted
    truth = (rng.random(n) < 0.4).astype(int)
    pred = pd.Series(np.where(rng.random(n) < 0.1, 1 - truth, truth), index=ids)
    rows = [(it, a, int(1 - t if rng.random() < 0.05 else t)) for it, t in zip(ids, truth, strict=True)
            for a in ("x", "y")]
    return pred, pd.DataFrame(rows, columns=["item", "annotator", "label"])


def test_annotation_data_pairs_sorted_annotations_with_the_predictions_by_item():
    pred, long = _crowd()
    ann = annotations_from_long(long)  # sorted by id: another order than the predictions
    assert not ann.index.equals(pred.index)
    d = AnnotationData(pred, ann, gold=pred.sort_index().astype(float), scores=pred.sample(frac=1, random_state=0))
    assert d.annotations.index.equals(pred.index) and d.gold.index.equals(pred.index)
    assert d.scores.index.equals(pred.index)
    expected = annotations_from_long(long, items=pred.index)
    pd.testing.assert_frame_equal(d.annotations, expected)
    agree = float((d.predictions.to_numpy() == d.annotations["x"].to_numpy()).mean())
    assert agree > 0.8  # positionally, about half: the model would see unrelated columns


def test_annotation_data_same_order_and_plain_arrays_are_unchanged():
    pred, long = _crowd()
    ann = annotations_from_long(long, items=pred.index)
    d = AnnotationData(pred, ann)
    assert d.annotations is ann and d.predictions is pred
    raw = AnnotationData(pred.to_numpy(), annotations_from_long(long).to_numpy())
    assert isinstance(raw.annotations, np.ndarray)


def test_annotation_data_items_nobody_labelled_are_an_error_with_the_fix():
    pred, long = _crowd()
    long = long[long["item"] != pred.index[0]]
    with pytest.raises(ValueError, match=r"1 of the 60 ids in `predictions`'s index are not in `annotations`'s "
                                         rf"\('{pred.index[0]}'\).*pass items=predictions.index"):
        AnnotationData(pred, annotations_from_long(long))
    with pytest.raises(ValueError, match=r"`gold` is a plain array"):
        AnnotationData(pred, annotations_from_long(_crowd()[1]), gold=np.zeros(60))


def test_annotation_error_sees_the_aligned_data():
    pred, long = _crowd()
    model = AnnotatorError()

    def data_of(m):
        return {v.name: np.asarray(v.get_value()) for v in m.data_vars}

    sorted_in = data_of(model.build(AnnotationData(pred, annotations_from_long(long))))
    in_order = data_of(model.build(AnnotationData(pred, annotations_from_long(long, items=pred.index))))
    positional = data_of(model.build(AnnotationData(pred.to_numpy(), annotations_from_long(long).to_numpy())))
    assert sorted_in.keys() == in_order.keys() and sorted_in
    assert all(np.array_equal(sorted_in[k], in_order[k]) for k in sorted_in)
    assert any(sorted_in[k].shape != positional[k].shape or not np.array_equal(sorted_in[k], positional[k])
               for k in sorted_in)


def test_annotation_data_names_the_items_by_their_ids_in_the_fit(tmp_path):
    """The index paired the inputs and was then dropped: the fit's ``data.item_ids``,
    ``item_probability()`` and log-likelihood named the items 0 .. n-1, not the user's ids. The first
    pandas input's index (or ``item_ids=``) now names them, as in bayeval.compare, and a saved fit keeps them."""
    import bayeval

    pred, long = _crowd()
    ids = pred.index.tolist()
    assert AnnotationData(pred, annotations_from_long(long)).item_ids.tolist() == ids  # sorted annotations, paired
    assert AnnotationData(pred.to_numpy(), annotations_from_long(long, items=pred.index)).item_ids.tolist() == ids
    plain = (pred.to_numpy(), annotations_from_long(long, items=pred.index).to_numpy())
    assert AnnotationData(*plain).item_ids is None  # plain arrays: positions, as before
    assert AnnotationData(*plain, item_ids=pred.index).item_ids.tolist() == ids
    with pytest.raises(ValueError, match=r"`predictions`'s index repeats ids \(e.g. 'a'\).*item_ids="):
        AnnotationData(pd.Series([0, 1], index=["a", "a"]), [[0], [1]])
    with pytest.raises(ValueError, match="item_ids"):
        AnnotationData(*plain, item_ids=ids[:-1])
    post = AnnotatorError().fit(AnnotationData(pred, annotations_from_long(long)), draws=50, tune=50, chains=1,
                                random_seed=0, progressbar=False, warn=False)
    assert post.data.item_ids.tolist() == ids
    assert post.item_probability()["item"].values.tolist() == ids
    assert post.idata.log_likelihood["item"].values.tolist() == ids
    back = bayeval.load(bayeval.save(post, tmp_path / "crowd.nc"))
    assert back.data.item_ids.tolist() == ids
    three = AnnotationData(pred.to_numpy() + (pred.to_numpy() == 0) * np.arange(60) % 3, plain[1], item_ids=ids)
    cat = AnnotatorError(n_classes=3).fit(three, draws=50, tune=50, chains=1, random_seed=0, progressbar=False,
                                          warn=False)
    assert cat.item_probability()["item"].values.tolist() == ids


# ------------------------------------------------------------------------- joint_data


def test_joint_data_pairs_score_series_and_labels_by_index():
    from bayeval.models.joint import joint_data

    a = pd.Series([0.9, 0.2, 0.4], index=["x", "y", "z"])
    b = pd.Series([0.6, 0.7, 0.1], index=["z", "x", "y"])
    d = joint_data({"a": a, "b": b}, pd.Series([0.0, 1.0, 1.0], index=["y", "z", "x"]))
    assert d.features.tolist() == [[0.9, 0.7], [0.2, 0.1], [0.4, 0.6]] and d.labels.tolist() == [1.0, 0.0, 1.0]
    # one pandas input among plain arrays: by position, as before (its own frame of scores aside)
    d = joint_data({"a": [0.9, 0.2, 0.4], "b": [0.7, 0.1, 0.6]}, pd.Series([1.0, 0.0, np.nan], index=[10, 11, 12]))
    np.testing.assert_array_equal(d.labels, [1.0, 0.0, np.nan])
    with pytest.raises(ValueError, match=r"`scores\['a'\]` and `scores\['b'\]` are pandas objects whose indexes"):
        joint_data({"a": a, "b": b.reset_index(drop=True)})
