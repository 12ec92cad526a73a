"""A model card's ``[model]`` reading of its scores, checked against them in the card's words.

:meth:`bayeval.cards.Card.check_scale` (used by ``bayeval report CARD``, ``bayeval vet`` and
``bayeval compare CARD_A CARD_B`` before anything is fitted) asks :func:`scale_findings`
what to refuse and what to warn: the models' own messages name their Python arguments
(``transform='logit'``), which a card's author never typed.
"""

from __future__ import annotations

import numpy as np

__all__ = ["scale_findings"]


def scale_findings(card, scores) -> tuple[str | None, str | None]:
    """``(refusal, warning)``: what ``card``'s ``[model]`` keys cannot read in ``scores``, and what they
    read doubtfully, each as a sentence naming the card file and key (None: nothing to say).

    Refused: ``transform = "logit"`` (``default``, ``calibration``, ``score_mixture``),
    ``curve = "beta"`` (``calibration``) or ``score_transform = "logit"`` (``label_flip``) on scores
    outside [0, 1]; a score mixture's ``transform = "log"`` on scores not all above 0. Warned:
    ``transform = "logodds"`` on scores that all lie in [0, 1] (they look like probabilities).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> card = SimpleNamespace(model_name="score_mixture", model_options={"transform": "log"},
    ...                        columns={"score": "s"}, card_file="card.toml")
    >>> scale_findings(card, [-1.0, 2.0])[0][:56]
    'card.toml: [model] transform = "log" reads the scores as'
    >>> scale_findings(card, [0.5, 2.0])
    (None, None)
    """
    scores = np.asarray(scores, dtype=float)
    name, options = card.model_name, card.model_options
    if name not in ("default", "calibration", "label_flip", "score_mixture") or not np.isfinite(scores).any():
        return None, None
    lo, hi = float(np.nanmin(scores)), float(np.nanmax(scores))
    where = f"column {card.columns['score']!r} ([data] score) holds scores from {lo:g} to {hi:g}"
    in_unit = lo >= 0 and hi <= 1
    if name == "label_flip":  # its key is score_transform: "auto", "logit" or "identity"
        if options.get("score_transform") == "logit" and not in_unit:
            return (f'{card.card_file}: [model] score_transform = "logit" reads the scores as probabilities, in '
                    f'[0, 1], but {where}. Set score_transform = "identity" under [model] for margins, log-odds or '
                    "other scores, or remove the key (auto: the logit of scores in [0, 1], other scores as they "
                    "are)."), None
        return None, None
    if name == "calibration" and options.get("curve") == "beta" and not in_unit:
        return (f'{card.card_file}: [model] curve = "beta" (Beta calibration) reads the scores as probabilities, '
                f'in [0, 1], but {where}. Set curve = "logistic" or "monotone" under [model] for log-odds, margins '
                "or other scores, or give [data] score a column of probabilities."), None
    transform = options.get("transform")
    key = f'{card.card_file}: [model] transform = "{transform}"'
    if transform == "logit" and not in_unit:
        fix = ('"identity" under [model] for log-odds or margins, "minmax" for other scores' if name == "score_mixture"
               else '"logodds" under [model] for log-odds, "standardize" for margins or other scores')
        return f"{key} reads the scores as probabilities, in [0, 1], but {where}. Set transform = {fix}, or remove " \
               "the key (auto).", None
    if name == "score_mixture" and transform == "log" and lo <= 0:
        return (f"{key} reads the scores as positive numbers (it takes their logarithm), but {where}. Set "
                'transform = "minmax" under [model] (it maps any scores into (0, 1)), or remove the key (auto).'), None
    if transform == "logodds" and in_unit and name != "score_mixture":
        return None, (f"{key} reads the scores as log-odds, but {where}, all in [0, 1]: these look like "
                      'probabilities. If they are, set transform = "logit" under [model] (or remove the key: auto), '
                      "which reads them as probabilities.")
    return None, None
