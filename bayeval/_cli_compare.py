"""`bayeval compare`'s check that something is vetted: a comparison fitted on no vetted label
rests on the prior alone (its P(best) and gap say nothing about the classifiers), so it is
refused with how to vet."""

from __future__ import annotations

import shlex

from ._cli_store import CLIError


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
