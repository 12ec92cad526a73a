"""Make ``scores.csv``: a logistic regression's cross-validated probabilities on the
breast-cancer data bundled with scikit-learn (no download).

Run from anywhere (needs scikit-learn)::

    python models/breast_cancer_logreg/make_scores.py

Classifier
    Standardized features, then an L2 logistic regression with strong regularization
    (``C=0.05``, so it is good but not perfect). Every one of the 569 tumours is
    scored by the model of the 5-fold stratified cross-validation split that did not
    train on it (``cross_val_predict``), so all scores are held out. Positive class =
    malignant (sklearn codes malignant as 0; here it is 1), 212 of 569 (37%).
Columns
    ``id`` (``tumour-000`` ...), ``score`` (P(malignant), rounded to 6 decimals),
    ``prediction`` (score >= 0.5), ``label`` (the vetted label, empty if not vetted)
    and ``truth`` (the true label of every item, kept only because this is an
    example where the truth is known; a real evaluation would not have it).
Vetted labels
    30 tumours drawn uniformly at random without replacement (``numpy`` generator
    seeded with 0), independently of their scores; their ``label`` is their true label.

Everything is seeded: running the script twice writes the same file.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

N_VETTED = 30
SEED = 0
OUT = Path(__file__).with_name("scores.csv")


def main() -> Path:
    X, y = load_breast_cancer(return_X_y=True)
    malignant = (y == 0).astype(int)
    clf = make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=1000))
    cv = StratifiedKFold(5, shuffle=True, random_state=SEED)
    proba = cross_val_predict(clf, X, malignant, cv=cv, method="predict_proba")[:, 1]
    proba = np.round(proba, 6)
    rng = np.random.default_rng(SEED)
    vetted = rng.choice(y.size, N_VETTED, replace=False)
    label = pd.array([pd.NA] * y.size, dtype="Int64")
    label[vetted] = malignant[vetted]
    df = pd.DataFrame(
        {
            "id": [f"tumour-{i:03d}" for i in range(y.size)],
            "score": proba,
            "prediction": (proba >= 0.5).astype(int),
            "label": label,
            "truth": malignant,
        }
    )
    df.to_csv(OUT, index=False)
    return OUT


if __name__ == "__main__":
    print(f"wrote {main()}")
