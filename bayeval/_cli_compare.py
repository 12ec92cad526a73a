"""`bayeval compare`'s labels of two cards' comparison store (found whichever order the cards
are given in), and its check that something is vetted: a comparison fitted on no vetted label
rests on the prior alone (its P(best) and gap say nothing about the classifiers), so it is
refused with how to vet."""

from __future__ import annotations

import shlex
import sys

from ._cli_checks import check_card_transform
from ._cli_store import CLIError, card_store_changes


def comparison_labels(joined):
    """The joined cards' data with the labels of the comparison's label store(s) over theirs.

    The store is found whichever order the cards are given in
    (:func:`bayeval.cards.comparison_store_files`); when both the order-free name and the
    name after the other order exist, both are read, and an item they label differently is
    an error naming both stores (no typed label is dropped or silently overruled). Which
    store was read, and how many labels it added, is said on stderr."""
    import numpy as np

    from .cards import (comparison_repair_command, comparison_store_file, comparison_store_files,
                        comparison_stores_source, with_store_labels)

    base = joined.data
    stores = comparison_store_files(joined)
    new = {}
    for store in stores:
        try:  # labels of ids the cards lack: refused, naming the repair-store command for this store
            new[store] = with_store_labels(base, store, comparison_stores_source(joined),
                                           repair=comparison_repair_command(joined, store))
        except ValueError as exc:
            raise CLIError(str(exc)) from exc
    if len(new) == 2:
        (p1, d1), (p2, d2) = new.items()
        clash = np.flatnonzero(d1.vetted & d2.vetted & (d1.labels != d2.labels))
        if clash.size:
            shown = ", ".join(repr(base.item_ids[j].item() if hasattr(base.item_ids[j], "item") else base.item_ids[j])
                              for j in clash[:5])
            raise CLIError(f"the comparison's two label stores {p1} and {p2} (named after either order of the "
                           f"cards) label {clash.size} item(s) differently: {shown}. Decide which is right: write "
                           f"one store's labels out (`bayeval export-labels {p2} labels.csv`), correct them, and "
                           f"import them into the other with `bayeval label {p1} labels.csv`; then move {p2} "
                           "away.")
    data = base
    for store, with_labels in new.items():
        more = with_labels.vetted & ~(base.vetted & (base.labels == with_labels.labels))  # what it adds or changes
        if store == stores[0]:
            data = with_labels
        elif more.any():
            data = data.with_labels(list(base.item_ids[more]), with_labels.labels[more], overwrite=True)
        added = int(np.sum(with_labels.vetted & ~base.vetted))
        changed = int(np.sum(base.vetted & (base.labels != with_labels.labels)))
        if added or changed:
            named = store.name if store == comparison_store_file(joined) else (
                f"{store} (named after the order {store.parent.name} {store.stem.removeprefix('vet-compare-')} "
                "of the cards, as earlier versions named it)")
            print(f"{added + changed} label(s) from the comparison's label store {named} ({added} of "
                  "items the cards leave unvetted" + (f", {changed} replacing theirs" if changed else "")
                  + f"): {data.n_vetted} vetted in all.", file=sys.stderr)
    return data


def card_transforms(joined) -> dict:
    """Each card's ``[model] transform`` as ``{name: transform}``: how :func:`bayeval.compare`
    reads that card's scores (a card that declares none: ``"auto"``).

    A transform the joint models do not take (a score mixture's ``"identity"``, say) is read
    as ``"auto"``, and stderr says so."""
    from .vet.comparison import card_transforms as transforms_of

    out = transforms_of(joined)
    for name, card in zip(joined.names, joined.cards, strict=True):
        given = card.model_options.get("transform", "auto")
        if given != out[name]:
            print(f"note: {name}'s card declares transform = {given!r} (its {card.model_name} model's map), which "
                  f"the comparison's joint models do not take: its scores are read with 'auto' (the logit of "
                  f"scores in [0, 1], other scores standardized).", file=sys.stderr)
    return out


def refuse_unvetted(args, data, *, cards=None) -> None:
    """A CLIError saying how to vet when no item of ``data`` (the comparison's labels) is vetted.

    ``cards``: the joined cards (:class:`bayeval.cards.JoinedCards`) of the cards' form; else
    the scores file's form (``--label`` / ``--store``)."""
    if data.n_vetted:
        return
    prior = ("so the comparison would rest on the prior alone: its ranking, P(best) and gap would say "
             "nothing about the classifiers")
    if cards is None:
        where = [f"the --label column {args.label!r} of {args.inputs[0]} is empty"] if args.label else []
        if args.store:
            where.append(f"the label store {args.store} labels none of its items")
        raise CLIError(f"No item is vetted ({' and '.join(where)}), {prior}. Vet some items first: fill the "
                       "--label column (1/0) for a sample of items, or type labels into a store (`bayeval select "
                       "SCORES --score COL --size N --store STORE` picks them, `bayeval label STORE LABELS.csv` "
                       "records them) and give --store STORE.")
    folders = " ".join(shlex.quote(str(c)) for c in args.inputs)
    columns = "; ".join(f"{name}: column {c.columns['label']!r} of {c.data_file.name}" if "label" in c.columns
                        else f"{name}: none" for name, c in zip(cards.names, cards.cards, strict=True))
    if len(cards.names) == 2:
        from .cards import comparison_store_file

        store = comparison_store_file(cards)
        raise CLIError(f"No item is vetted: neither the cards' label columns ({columns}) nor the comparison's "
                       f"label store {store}{'' if store.is_file() else ' (not made yet)'} hold a label, {prior}. "
                       "Vet items "
                       f"for this comparison first: `bayeval vet {folders}` shows the items that move the "
                       f"comparison most and writes each answer to {store.name}, which `bayeval compare` reads; "
                       "then run this command again.")
    raise CLIError(f"No item is vetted in the cards' label columns ({columns}), {prior}. Fill a label column "
                   "(1/0) for a sample of items, or compare two cards at a time after vetting for their "
                   "comparison with `bayeval vet CARD_A CARD_B`.")


def refuse_store_with_cards(args) -> None:
    """``--store`` names one scores file's label store: with cards, a CLIError saying which
    stores a comparison of cards reads instead (never ignored silently)."""
    if not getattr(args, "store", None):
        return
    folders = " ".join(shlex.quote(str(c)) for c in args.inputs)
    raise CLIError(f"--store {args.store} goes with a scores file (--score A B ...); with model cards it is not "
                   "used. A comparison of cards reads each card's own label store ([vet] store in its card.toml, "
                   "default vet.sqlite in the card's folder), as `bayeval report CARD` does, and, for two cards, "
                   f"the comparison's store that `bayeval vet {folders}` writes. Leave --store out; to use the "
                   "labels of another store, import them into a card's store with `bayeval label`.")


def say_card_stores(joined) -> None:
    """Say on stderr how many labels each card's label store added to (or changed in) its
    scores file's labels, naming the ones it replaces: the comparison pools them, as each
    card's report reads them."""
    for name, card in zip(joined.names, joined.cards, strict=True):
        if not card.store_file.is_file():
            continue
        added, replaced = card_store_changes(card, card.load_data(store=True)[0])
        if added or replaced:
            shown = ", ".join(replaced[:10]) + (f" and {len(replaced) - 10} more" if len(replaced) > 10 else "")
            print(f"{name}: {len(added) + len(replaced)} label(s) from its label store {card.store_file} "
                  f"({len(added)} of items its scores file leaves unvetted"
                  + (f", {len(replaced)} replacing the file's label: {shown}" if replaced else "")
                  + f"), pooled with the other cards' labels: {joined.data.n_vetted} vetted in all.", file=sys.stderr)


def check_compare_size(args, data) -> None:
    """Refuse a comparison whose estimated peak memory, with the data's size (its items and vetted
    labels: :func:`bayeval.core._validate.fit_memory_gb`, the joint models as the candidates), is
    above ``--max-memory-gb`` (or ``BAYEVAL_MAX_MEMORY_GB``, else 4 GB), in the command line's
    words, before anything is fitted (:func:`bayeval.compare` would name its ``max_memory_gb=``)."""
    from .compare.comparison import JOINT_CURVES
    from .core import _validate as V

    k = len(JOINT_CURVES)  # the default model's candidates, as bayeval.compare counts them
    try:
        V.check_job_size(args.chains, args.draws, bytes_per_draw=V.FIT_BYTES_PER_DRAW * k * 4, what="bayeval compare",
                         how_to_raise="--max-memory-gb", items=data.n_items, vetted=data.n_vetted, candidates=k,
                         draws_option="--draws ")
    except ValueError as exc:
        raise CLIError(f"{exc} Nothing was fitted.") from exc


#: said after a comparison of cards: why its numbers are not each card's report's
JOINT_CAVEAT = ("each classifier's value here comes from one joint model of all the cards' scores (the same "
                "label draws shared by every classifier), so it can differ from that card's own report, which "
                "models its scores alone; the paired gap on shared draws is what the comparison is for.")


def card_inputs(args):
    """``(scores, labels, transforms, said)`` of ``bayeval compare CARD_A CARD_B ...``: the cards
    joined on item id with each card's label store read (said on stderr), and, for two cards, the
    comparison's own store over them. Each card's ``[model]`` reading of its scores is checked
    first, in the card's words, as ``bayeval report CARD`` checks it (:func:`check_card_transform`:
    refused, or warned about); ``said``: whether a warning was given (the fit need not say it again)."""
    if args.label is not None or args.item_id is not None:
        raise CLIError("--label and --id go with a scores file (--score A B ...); cards name their own "
                       "columns in card.toml. Leave them out, or give one scores file with --score.")
    refuse_store_with_cards(args)
    if len(args.inputs) < 2:
        raise CLIError(f"compare needs two or more model cards that scored the same items (bayeval compare "
                       f"CARD_A CARD_B ...), or one scores file with --score A B --label COL; got only "
                       f"{args.inputs[0]!r}.")
    from .cards import join_cards

    joined = join_cards(args.inputs)  # a CardError says which ids or labels differ
    said = [check_card_transform(card, joined.scores[name]) for name, card in zip(joined.names, joined.cards,
                                                                                 strict=True)]
    say_card_stores(joined)
    data = joined.data
    if len(joined.names) == 2:  # the labels vetted for this comparison (bayeval vet CARD_A CARD_B)
        data = comparison_labels(joined)
    refuse_unvetted(args, data, cards=joined)
    return joined.scores, data, card_transforms(joined), any(said)
