"""Make ``scores.csv``: noisy tags on (image, digit) pairs, scored by a multinomial
logistic regression on the 8x8 digits data bundled with scikit-learn (no download).

Run from anywhere (needs scikit-learn)::

    python models/noisy_tags_digits/make_scores.py

Items
    Every (image, tag) pair of the 1,797 images and the 10 digit tags: 17,970 items.
    Category = the tag (``digit 0`` ... ``digit 9``); an item is relevant (true label
    1) when the image shows that digit, so each image has exactly one relevant tag.
Classifier
    Standardized pixels, then a multinomial logistic regression with strong
    regularization (``C=0.001``: 90% accuracy, so the rankings are not perfect). The
    score of a pair is the classifier's probability of that digit for that image,
    from the model of the 5-fold stratified cross-validation split that did not
    train on the image (all scores are held out).
Noisy tags
    Simulated as user tags with the flip rates reported for NUS-WIDE: a relevant tag
    is listed with probability 0.38, an irrelevant one with probability 0.01
    (``numpy`` generator seeded with 0).
Vetted labels
    The 5 top-scored items of each category's ranked list (ties broken by image
    order): 50 vetted items, chosen by score as a person checking the top of each
    list would. Their ``label`` is their true label.
Columns
    ``id`` (``img0000:3`` = image 0, tag 3), ``category``, ``score`` (rounded to 5
    decimals), ``noisy`` (the simulated tag, 0/1), ``label`` (vetted label, empty if
    not vetted), ``truth`` (the true label of every item, kept only because the truth
    is known here).

Everything is seeded: running the script twice writes the same file.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_predict
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

P_TAG_IF_RELEVANT = 0.38
P_TAG_IF_IRRELEVANT = 0.01
TOP_VETTED = 5
SEED = 0
OUT = Path(__file__).with_name("scores.csv")


def main() -> Path:
    X, digit = load_digits(return_X_y=True)
    clf = make_pipeline(StandardScaler(), LogisticRegression(C=0.001, max_iter=5000))
    cv = StratifiedKFold(5, shuffle=True, random_state=SEED)
    proba = np.round(cross_val_predict(clf, X, digit, cv=cv, method="predict_proba"), 5)
    n_images, n_tags = proba.shape
    image = np.repeat(np.arange(n_images), n_tags)
    tag = np.tile(np.arange(n_tags), n_images)
    score = proba.ravel()
    truth = (digit[image] == tag).astype(int)
    rng = np.random.default_rng(SEED)
    p_tag = np.where(truth == 1, P_TAG_IF_RELEVANT, P_TAG_IF_IRRELEVANT)
    noisy = (rng.random(truth.size) < p_tag).astype(int)
    label = pd.array([pd.NA] * truth.size, dtype="Int64")
    for t in range(n_tags):
        members = np.flatnonzero(tag == t)
        top = members[np.argsort(-score[members], kind="stable")[:TOP_VETTED]]
        label[top] = truth[top]
    df = pd.DataFrame(
        {
            "id": [f"img{i:04d}:{t}" for i, t in zip(image, tag, strict=True)],
            "category": [f"digit {t}" for t in tag],
            "score": score,
            "noisy": noisy,
            "label": label,
            "truth": truth,
        }
    )
    df.to_csv(OUT, index=False)
    return OUT


if __name__ == "__main__":
    print(f"wrote {main()}")
