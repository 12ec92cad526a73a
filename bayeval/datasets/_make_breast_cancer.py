"""Make the bundled example: a real classifier's scores on scikit-learn's breast-cancer data.

Run from the repository root (needs scikit-learn, the `test` extra):

    python -m bayeval.datasets._make_breast_cancer

A logistic regression (standardized features, C=0.05 so that it is not perfect) gets
5-fold cross-validated probabilities for the 569 tumours; "positive" is malignant.
40 items, chosen at random with a fixed seed, are "vetted" (their true label is in
`label`); the others have an empty `label`. `true_label` keeps the truth for every item
so that estimates can be checked against it -- a real evaluation would not have it.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

N_VETTED = 40
SEED = 0


def main() -> Path:
    X, y = load_breast_cancer(return_X_y=True)
    malignant = (y == 0).astype(int)  # sklearn codes malignant as 0
    clf = make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=1000))
    cv = StratifiedKFold(5, shuffle=True, random_state=SEED)
    proba = cross_val_predict(clf, X, malignant, cv=cv, method="predict_proba")[:, 1]
    rng = np.random.default_rng(SEED)
    vetted = rng.choice(y.size, N_VETTED, replace=False)
    label = np.full(y.size, np.nan)
    label[vetted] = malignant[vetted]
    df = pd.DataFrame(
        {
            "item_id": [f"tumour-{i:03d}" for i in range(y.size)],
            "score": np.round(proba, 6),
            "prediction": (proba >= 0.5).astype(int),
            "label": label,
            "true_label": malignant,
        }
    )
    out = Path(__file__).with_name("breast_cancer.csv")
    df.to_csv(out, index=False)
    return out


if __name__ == "__main__":
    print(f"wrote {main()}")
