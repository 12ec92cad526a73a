"""What the vetting page shows of each item, and the one gate to the files it may serve.

An :class:`ItemView` holds, per item of an evaluation set, its id, score, category, and
the image and text the card's ``[vet]`` table names. It hands the page plain JSON (the
page sets every value as text, never as markup) and serves image files only through
:meth:`ItemView.media_file`, which refuses anything but an image file named in the card,
inside the card's folder.

Examples
--------
>>> import pathlib, tempfile
>>> import numpy as np
>>> from bayeval import EvalData
>>> from bayeval.vet.items import ItemView
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "a.png").write_bytes(b"\\x89PNG\\r\\n\\x1a\\n")
>>> data = EvalData(np.array([0.9, 0.2]), item_ids=["a", "b"])
>>> view = ItemView(data, folder=folder, images=["a.png", "../secret.png"], texts=["<b>hi</b>", None])
>>> view.show(0)["image"], view.show(0)["text"]
({'kind': 'file', 'src': 'media/0'}, '<b>hi</b>')
>>> view.media_file(0).name
'a.png'
>>> view.show(1)["image"]["kind"], view.show(1)["image"]["why"][:33]
('missing', "'../secret.png' is outside the ca")
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

__all__ = ["ItemView", "MediaError", "IMAGE_TYPES"]

#: The image files the page serves, by suffix, with their media type. SVG is left out:
#: an SVG file can carry a script.
IMAGE_TYPES = {
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".webp": "image/webp",
    ".bmp": "image/bmp",
}


class MediaError(LookupError):
    """An image the page may not serve: not named in the card, outside its folder, missing.

    Examples
    --------
    >>> from bayeval.vet.items import MediaError
    >>> issubclass(MediaError, LookupError)
    True
    """


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


class ItemView:
    """The items of an evaluation set as the vetting page shows them.

    Parameters
    ----------
    data : EvalData
        The evaluation set: ids, scores and categories come from it.
    folder : path-like, optional
        The card's folder: image paths are relative to it, and only files inside it are
        served. Without a folder, only http(s) URLs are shown.
    images, texts : sequence of (str or None), optional
        One entry per item: an image path (relative to ``folder``) or an ``http://`` /
        ``https://`` URL; the text to show. None or empty: nothing.
    scores : dict of str to array_like, optional
        Several classifiers' scores of the items (a comparison): shown with their names
        besides ``data``'s score.

    Examples
    --------
    >>> import numpy as np
    >>> from bayeval import EvalData
    >>> from bayeval.vet.items import ItemView
    >>> view = ItemView(EvalData(np.array([0.7]), categories=["cat"]),
    ...                 images=["https://example.org/1.jpg"])
    >>> view.show(0)
    {'item': 0, 'position': 0, 'score': 0.7, 'category': 'cat', 'image': {'kind': 'url', 'src': 'https://example.org/1.jpg'}, 'text': None, 'scores': None}
    """

    def __init__(self, data, *, folder=None, images=None, texts=None, scores=None):
        n = int(data.n_items)
        self.data = data
        self.scores = None
        if scores is not None:
            self.scores = {str(k): np.asarray(v, dtype=np.float64) for k, v in dict(scores).items()}
            bad = {k: v.shape for k, v in self.scores.items() if v.shape != (n,)}
            if bad:
                raise ValueError(f"`scores` must hold one score per item ({n}) for each classifier, got shapes {bad}.")
        self.folder = None if folder is None else Path(folder).resolve()
        self.images = self._column(images, n, "images")
        self.texts = self._column(texts, n, "texts")
        self._ids = [_plain(i) for i in data.item_ids.tolist()]
        self.position = {item: j for j, item in enumerate(self._ids)}

    @staticmethod
    def _column(values, n: int, name: str) -> list:
        if values is None:
            return [None] * n
        values = list(values)
        if len(values) != n:
            raise ValueError(f"`{name}` must have one entry per item ({n}), got {len(values)}.")
        out = []
        for v in values:
            if v is None or (isinstance(v, float) and math.isnan(v)) or str(v).strip() == "":
                out.append(None)
            else:
                out.append(str(v))
        return out

    @property
    def n_items(self) -> int:
        """How many items."""
        return len(self._ids)

    def item_id(self, position: int):
        """The id of the item at ``position`` (an int or a str, as in the label store)."""
        return self._ids[position]

    def show(self, position: int) -> dict:
        """The item at ``position`` as the page shows it (JSON-ready; text is never markup)."""
        data = self.data
        category = None
        if data.has_categories:
            category = str(data.category_names[data.category_codes[position]])
        return {
            "item": self._ids[position],
            "position": int(position),
            "score": float(data.scores[position]),
            "category": category,
            "image": self._image(position),
            "text": self.texts[position],
            "scores": None if self.scores is None else {k: float(v[position]) for k, v in self.scores.items()},
        }

    def _image(self, position: int) -> dict | None:
        value = self.images[position]
        if value is None:
            return None
        low = value.lower()
        if low.startswith(("http://", "https://")):
            return {"kind": "url", "src": value}
        try:
            self.media_file(position)
        except MediaError as exc:
            return {"kind": "missing", "why": str(exc)}
        return {"kind": "file", "src": f"media/{position}"}

    def media_file(self, position: int) -> Path:
        """The image file of the item at ``position``, if the page may serve it.

        Raises
        ------
        MediaError
            The position is not an item, the item names no image file (or a URL), or
            the file is outside the card folder, missing, or not an image type of
            :data:`IMAGE_TYPES`.
        """
        if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < self.n_items:
            raise MediaError(f"no item at position {position!r}: positions run from 0 to {self.n_items - 1}.")
        value = self.images[position]
        if value is None or value.lower().startswith(("http://", "https://")):
            raise MediaError(f"item {self._ids[position]!r} names no image file in the card.")
        if self.folder is None:
            raise MediaError("no card folder: only http(s) image URLs can be shown.")
        path = (self.folder / value).resolve()
        if not path.is_relative_to(self.folder):
            raise MediaError(f"{value!r} is outside the card folder; it is not served.")
        if path.suffix.lower() not in IMAGE_TYPES:
            raise MediaError(f"{value!r} is not an image file of a served type ({', '.join(IMAGE_TYPES)}).")
        if not path.is_file():
            raise MediaError(f"{value!r}: no such file in the card folder.")
        return path

    @classmethod
    def from_card(cls, card, data, *, scores=None) -> ItemView:
        """The view of a model card's items (its ``[vet]`` image and text columns).

        Examples
        --------
        >>> from bayeval.cards import load_card
        >>> from bayeval.vet.items import ItemView
        >>> card = load_card("models/digits_vet")  # doctest: +SKIP
        >>> ItemView.from_card(card, card.load_data()[0]).show(0)["image"]  # doctest: +SKIP
        {'kind': 'file', 'src': 'media/0'}
        """
        vet = card.vet
        images = card.column_text(vet["image"]) if "image" in vet else None
        texts = card.column_text(vet["text"]) if "text" in vet else None
        return cls(data, folder=card.path, images=images, texts=texts, scores=scores)
