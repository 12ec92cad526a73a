"""pandas' nullable (extension) dtypes as per-item inputs: ``boolean``, ``Int64``, ``Float64``
and ``string`` columns, with ``pd.NA`` for a missing value, read as the numpy columns are."""

import numpy as np
import pandas as pd
import pytest

from bayeval import EvalData
from bayeval.core import _validate as V

SCORES = [0.1, 0.4, 0.6, 0.9]


@pytest.mark.parametrize(
    "labels",
    [
        pd.Series([True, None, False, None], dtype="boolean"),
        pd.array([True, None, False, None], dtype="boolean"),
        pd.Series([1, None, 0, None], dtype="Int64"),
        pd.Series([1.0, None, 0.0, None], dtype="Float64"),
        pd.Series(["true", None, "0", None], dtype="string"),
        pd.Series(["TRUE", None, "false", None]),  # pandas' default text dtype
        np.array([True, pd.NA, False, None], dtype=object),
    ],
    ids=["boolean", "boolean-array", "Int64", "Float64", "string", "text", "object-NA"],
)
def test_nullable_labels_are_read_with_NA_as_not_vetted(labels):
    d = EvalData(SCORES, labels)
    np.testing.assert_array_equal(d.labels, [1.0, np.nan, 0.0, np.nan])


def test_nullable_numeric_inputs_of_every_kind_are_read():
    d = EvalData(
        pd.Series(SCORES, dtype="Float64"),
        noisy_labels=pd.Series([True, False, True, False], dtype="boolean"),
        predictions=pd.Series([1, 0, 0, 1], dtype="Int64"),
    )
    assert d.scores.tolist() == SCORES
    assert d.noisy_labels.tolist() == [1, 0, 1, 0] and d.predictions.tolist() == [1, 0, 0, 1]
    assert V.as_1d_float(pd.Series([1.5, None], dtype="Float64"), "x", allow_nan=True)[1] != 0


def test_NA_where_a_value_is_required_says_so():
    with pytest.raises(ValueError, match=r"`predictions` must be fully known .* 1 value\(s\) are NaN"):
        EvalData(SCORES, predictions=pd.Series([True, None, False, True], dtype="boolean"))
    with pytest.raises(ValueError, match=r"`scores` must be finite, but 1 value\(s\) are NaN"):
        EvalData(pd.Series([0.1, None, 0.3, 0.4], dtype="Float64"))


def test_text_in_an_extension_array_is_still_named():
    with pytest.raises(TypeError, match=r"`scores` must hold numbers, but 1 value\(s\) are not numbers "
                                        r"\(position 1: 'high'\)"):
        EvalData(pd.Series(["0.1", "high", None, "0.4"], dtype="string"))
    with pytest.raises(ValueError, match=r"`labels` must hold 1 \(positive\), 0 \(negative\) or NaN/None \(not vetted\).* position 0: 'yes'"):
        EvalData(SCORES, pd.Series(["yes", None, "1", None], dtype="string"))
    with pytest.raises(TypeError, match=r"`x` must hold numbers, but 1 value\(s\) are not numbers \(position 0: 'yes'\)"):
        V.as_1d_float(pd.Series(["yes", None], dtype="string"), "x", allow_nan=True)


def test_NA_in_categories_and_ids_is_missing_not_the_text_NA():
    with pytest.raises(ValueError, match="`categories` holds missing values"):
        EvalData(SCORES, categories=pd.Series(["a", None, "b", "a"], dtype="string"))
    with pytest.raises(ValueError, match="`item_ids` holds missing values"):
        EvalData(SCORES, item_ids=pd.Series(["a", None, "b", "c"], dtype="string"))
    with pytest.raises(ValueError, match="`item_ids` holds missing values"):
        EvalData(SCORES, item_ids=pd.Series([3, None, 2, 1], dtype="Int64"))
    d = EvalData(SCORES, categories=pd.Series(["a", "b", "b", "a"], dtype="string"),
                 item_ids=pd.Series(["w", "x", "y", "z"], dtype="string"))
    assert d.category_names.tolist() == ["a", "b"] and d.item_ids.tolist() == ["w", "x", "y", "z"]
