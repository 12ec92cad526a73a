"""Make ``scores.csv``: a linear SVM's held-out margins for "is this digit an 8?" on the
8x8 digits data bundled with scikit-learn (no download).

Run from anywhere (needs scikit-learn)::

    python models/digits_svm/make_scores.py

Classifier
    Standardized pixels, then a linear support vector machine (``LinearSVC``, hinge
    loss, ``C=0.01``) trained one-vs-rest for the digit 8 -- the digit the linear
    model separates worst (8s look like 1s, 3s and 9s). The score is the signed
    distance to the separating hyperplane (``decision_function``): any real number,
    not a probability, positive on the "8" side. Every one of the 1,797 images is
    scored by the model of the 5-fold stratified cross-validation split that did not
    train on it, so all margins are held out. 174 images (9.7%) are 8s.
Columns
    ``id`` (``digit-0000`` ...), ``score`` (the margin, rounded to 6 decimals),
    ``label`` (vetted label, empty if not vetted), ``truth`` (the true label of
    every image, kept only because the truth is known here).
Vetted labels
    30 images drawn uniformly at random without replacement (``numpy`` generator
    seeded with 0), independently of their scores.

Everything is seeded: running the script twice writes the same file.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

POSITIVE_DIGIT = 8
N_VETTED = 30
SEED = 0
OUT = Path(__file__).with_name("scores.csv")


def main() -> Path:
    X, digit = load_digits(return_X_y=True)
    y = (digit == POSITIVE_DIGIT).astype(int)
    clf = make_pipeline(StandardScaler(), LinearSVC(C=0.01, max_iter=20_000, random_state=SEED))
    cv = StratifiedKFold(5, shuffle=True, random_state=SEED)
    margin = cross_val_predict(clf, X, y, cv=cv, method="decision_function")
    rng = np.random.default_rng(SEED)
    vetted = rng.choice(y.size, N_VETTED, replace=False)
    label = pd.array([pd.NA] * y.size, dtype="Int64")
    label[vetted] = y[vetted]
    df = pd.DataFrame(
        {
            "id": [f"digit-{i:04d}" for i in range(y.size)],
            "score": np.round(margin, 6),
            "label": label,
            "truth": y,
        }
    )
    df.to_csv(OUT, index=False)
    return OUT


if __name__ == "__main__":
    print(f"wrote {main()}")
