"""The vetting page: label what the posterior asks for, and watch the interval shrink.

``bayeval vet CARD`` serves a local web page that shows the next proposed item of a
model card (its image or text, category and score), takes yes / no / skip / undo from
buttons or the keys ``y`` ``n`` ``s`` ``u``, writes every answer to the label store before
acknowledging it, and shows the card's metric with its credible interval after each
background refit. Several people may vet at once: each item is leased to one page.

* :class:`VetSession` -- leases, answers straight to the store, background refits;
* :func:`open_vet` / :func:`find_card` -- a session for a model card (or its store);
* :func:`open_compare` / :func:`find_target` -- a session comparing two cards that scored
  the same items: the gap and ``P(A better)`` on the page (:mod:`bayeval.vet.comparison`);
* :class:`ItemView` -- what the page shows of each item, and which files it may serve;
* :func:`create_app` / :func:`serve` -- the web application (Starlette) and its server
  (uvicorn): the optional extra ``pip install -e ".[vet]"``, imported only when used.

Examples
--------
>>> from bayeval.vet import open_vet, find_card, serve
>>> card, _ = find_card("models/digits_vet")
>>> serve(open_vet(card), port=8000)  # doctest: +SKIP
"""

from .app import create_app, new_token, serve
from .items import ItemView, MediaError
from .comparison import ComparisonSession, comparison_readout, find_target, open_compare
from .session import VetError, VetSession, find_card, metric_readout, open_vet

__all__ = [
    "ComparisonSession",
    "ItemView",
    "MediaError",
    "VetError",
    "VetSession",
    "comparison_readout",
    "create_app",
    "find_card",
    "find_target",
    "metric_readout",
    "new_token",
    "open_compare",
    "open_vet",
    "serve",
]
