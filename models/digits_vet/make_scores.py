"""Make ``scores.csv`` and ``images/``: a logistic regression's held-out probabilities for
"is this digit an 8?" on the 8x8 digits bundled with scikit-learn, with each image as a
small PNG, for the vetting page (``bayeval vet models/digits_vet``).

Run from anywhere (needs scikit-learn; Pillow comes with matplotlib)::

    python models/digits_vet/make_scores.py

Classifier
    Standardized pixels, then a logistic regression (``C=0.01``) for the digit 8 against
    the other nine, trained on a stratified half of the 1,797 images (seeded); the other
    half, 899 images, is scored. The score is the predicted probability of an 8.
Columns
    ``id`` (``digit-0000`` ... the image's index in scikit-learn's data set), ``score``
    (rounded to 6 decimals), ``label`` (empty: nothing is vetted, the page does it),
    ``image`` (the PNG file, relative to this folder), ``truth`` (the true label,
    kept only because the truth is known here).
Images
    ``images/digit-NNNN.png``: the 8x8 image as 8-bit grey, dark ink on white (the page
    enlarges it without smoothing).

Everything is seeded: running the script twice writes the same files.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

POSITIVE_DIGIT = 8
SEED = 0
HERE = Path(__file__).parent
OUT = HERE / "scores.csv"


def main(out: Path = OUT) -> Path:
    X, digit = load_digits(return_X_y=True)
    y = (digit == POSITIVE_DIGIT).astype(int)
    index = np.arange(y.size)
    train, test = train_test_split(index, test_size=0.5, stratify=y, random_state=SEED)
    test = np.sort(test)
    clf = make_pipeline(StandardScaler(), LogisticRegression(C=0.01, max_iter=5000))
    clf.fit(X[train], y[train])
    p = clf.predict_proba(X[test])[:, 1]
    images = out.parent / "images"
    images.mkdir(exist_ok=True)
    names = []
    for i in test:
        name = f"images/digit-{i:04d}.png"
        grey = (255 - np.round(X[i].reshape(8, 8) * 255 / 16)).astype(np.uint8)
        Image.fromarray(grey, mode="L").save(out.parent / name, optimize=True)
        names.append(name)
    df = pd.DataFrame(
        {
            "id": [f"digit-{i:04d}" for i in test],
            "score": np.round(p, 6),
            "label": pd.array([pd.NA] * test.size, dtype="Int64"),
            "image": names,
            "truth": y[test],
        }
    )
    df.to_csv(out, index=False)
    return out


if __name__ == "__main__":
    print(f"wrote {main()}")
