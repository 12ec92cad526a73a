"""Make ``scores.csv``: a gradient-boosting classifier's held-out scores for a rare
positive class ("fraud") on *synthetic* data from ``sklearn.datasets.make_classification``
(no download; no real transactions are involved).

Run from anywhere (needs scikit-learn; under a minute)::

    python models/rare_fraud_gbm/make_scores.py

Data
    80,000 synthetic "transactions" with 20 features (6 informative, 4 redundant, one
    Gaussian cluster per class, ``class_sep=1.5``, no label noise), of which 0.5% are
    positive ("fraud"). A stratified half (40,000, 200 positives) trains the
    classifier; the other half is the evaluation set in ``scores.csv``: every score
    is held out.
Classifier
    ``HistGradientBoostingClassifier`` (200 iterations at most with early stopping,
    learning rate 0.05, 15 leaves, L2 penalty 1, half of the features per split). The
    score is its raw decision function, the log-odds of fraud (any real number; a
    probability is ``1 / (1 + exp(-score))``). Log-odds spread the 99.5% negatives
    out instead of piling them up against probability 0.
Vetted labels
    100 items: 50 drawn uniformly at random, then the 50 top-scored items not
    already drawn (the alerts an analyst checks first). The vetting depends on the
    scores only (and on chance), so a model of the label given the score (the card's
    calibration curves, or a score mixture, which conditions on every score) stays
    unbiased; estimates that use the vetted items as a random sample (``vetted_only``)
    do not.
Columns
    ``id`` (``txn-00000`` ...), ``score`` (log-odds, rounded to 4 decimals), ``label``
    (vetted label, empty if not vetted), ``truth`` (the true label of every item, kept
    only because the data are simulated).

Everything is seeded: running the script twice writes the same file.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split

N_RANDOM = 50
N_TOP = 50
SEED = 0
OUT = Path(__file__).with_name("scores.csv")


def main() -> Path:
    X, y = make_classification(
        n_samples=80_000,
        n_features=20,
        n_informative=6,
        n_redundant=4,
        n_clusters_per_class=1,
        weights=[0.995],
        flip_y=0.0,
        class_sep=1.5,
        random_state=SEED,
    )
    X_train, X_eval, y_train, y_eval = train_test_split(
        X, y, test_size=0.5, stratify=y, random_state=SEED
    )
    clf = HistGradientBoostingClassifier(
        max_iter=200,
        learning_rate=0.05,
        max_leaf_nodes=15,
        l2_regularization=1.0,
        max_features=0.5,
        random_state=SEED,
    ).fit(X_train, y_train)
    score = np.round(clf.decision_function(X_eval), 4)
    rng = np.random.default_rng(SEED)
    uniform = rng.choice(y_eval.size, N_RANDOM, replace=False)
    ranked = np.argsort(-score, kind="stable")
    top = ranked[~np.isin(ranked, uniform)][:N_TOP]
    vetted = np.r_[uniform, top]
    label = pd.array([pd.NA] * y_eval.size, dtype="Int64")
    label[vetted] = y_eval[vetted]
    df = pd.DataFrame(
        {
            "id": [f"txn-{i:05d}" for i in range(y_eval.size)],
            "score": score,
            "label": label,
            "truth": y_eval,
        }
    )
    df.to_csv(OUT, index=False)
    return OUT


if __name__ == "__main__":
    print(f"wrote {main()}")
