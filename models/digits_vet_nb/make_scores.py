"""Make ``scores.csv``: a second classifier of "is this digit an 8?" on the same 899 held-out
images as ``models/digits_vet``, to compare the two on the vetting page
(``bayeval vet models/digits_vet models/digits_vet_nb``) or with ``bayeval compare``.

Run from anywhere (needs scikit-learn)::

    python models/digits_vet_nb/make_scores.py

Classifier
    Gaussian naive Bayes on the 64 raw pixels for the digit 8 against the other nine,
    trained on the same stratified half of scikit-learn's 1,797 digit images as
    ``models/digits_vet`` (the same seed and split); the other half, the same 899 images
    with the same ids, is scored. The score is the predicted log-odds of an 8 (naive
    Bayes' probabilities are mostly 0 or 1 to machine precision, its log-odds still rank).
Columns
    ``id`` (``digit-0000`` ...: the ids of ``models/digits_vet``), ``score`` (rounded to
    4 decimals), ``label`` (empty: nothing is vetted), ``truth`` (the true label, kept
    only because the truth is known here). No images: the page shows those of the first
    card of a comparison.

Everything is seeded: running the script twice writes the same file.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.naive_bayes import GaussianNB

POSITIVE_DIGIT = 8
SEED = 0  # the split of models/digits_vet
HERE = Path(__file__).parent
OUT = HERE / "scores.csv"


def main(out: Path = OUT) -> Path:
    X, digit = load_digits(return_X_y=True)
    y = (digit == POSITIVE_DIGIT).astype(int)
    index = np.arange(y.size)
    train, test = train_test_split(index, test_size=0.5, stratify=y, random_state=SEED)
    test = np.sort(test)
    clf = GaussianNB().fit(X[train], y[train])
    logp = clf.predict_joint_log_proba(X[test])
    df = pd.DataFrame(
        {
            "id": [f"digit-{i:04d}" for i in test],
            "score": np.round(logp[:, 1] - logp[:, 0], 4),
            "label": pd.array([pd.NA] * test.size, dtype="Int64"),
            "truth": y[test],
        }
    )
    df.to_csv(out, index=False)
    return out


if __name__ == "__main__":
    print(f"wrote {main()}")
