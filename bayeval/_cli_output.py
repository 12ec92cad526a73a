"""What the CLI writes where: with ``--format csv`` stdout holds the table alone (one CSV that
``pandas.read_csv`` reads back), and every sentence around it goes to stderr."""

from __future__ import annotations

import sys

__all__ = ["machine_readable", "tell", "compare_csv", "print_compare", "print_items", "annotator_name", "strip_annotator",
           "nothing_to_select"]


def machine_readable(args) -> bool:
    """Is stdout for a program (``--format csv``) rather than for a person?

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from bayeval._cli_output import machine_readable
    >>> machine_readable(SimpleNamespace(table_format="csv")), machine_readable(SimpleNamespace())
    (True, False)
    """
    return getattr(args, "table_format", "table") == "csv"


def tell(args, text: str = "") -> None:
    """Print a sentence: to stdout for a person, to stderr when stdout holds a CSV table.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from bayeval._cli_output import tell
    >>> tell(SimpleNamespace(table_format="table"), "threshold: 0.5")
    threshold: 0.5
    """
    print(text, file=sys.stderr if machine_readable(args) else sys.stdout)


def compare_csv(ranking, pairs) -> str:
    """`bayeval compare --format csv`'s one CSV: the ranking's rows then the pairs', each named in
    a first column ``table`` (``ranking`` or ``pairs``); a column the other table lacks is empty.

    Examples
    --------
    >>> import io
    >>> import pandas as pd
    >>> from bayeval._cli_output import compare_csv
    >>> ranking = pd.DataFrame({"mean": [0.9, 0.8]}, index=pd.Index(["a", "b"], name="model"))
    >>> pairs = pd.DataFrame({"better": ["a"], "worse": ["b"], "p_better": [0.7]}).set_index(["better", "worse"])
    >>> text = compare_csv(ranking, pairs)
    >>> print(text)
    table,model,mean,better,worse,p_better
    ranking,a,0.9,,,
    ranking,b,0.8,,,
    pairs,,,a,b,0.7
    >>> pd.read_csv(io.StringIO(text)).groupby("table").size().to_dict()
    {'pairs': 1, 'ranking': 2}
    """
    import pandas as pd

    parts = [ranking.reset_index().assign(table="ranking"), pairs.reset_index().assign(table="pairs")]
    both = pd.concat(parts, ignore_index=True, sort=False)
    both = both[["table", *[c for c in both.columns if c != "table"]]]
    return both.to_csv(index=False).rstrip("\n")


def print_compare(args, ranking, pairs, format_frame) -> None:
    """`bayeval compare`'s two tables on stdout: one CSV (:func:`compare_csv`) with ``--format csv``,
    else each as ``format_frame(table, fmt)`` prints it, a blank line between.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> import pandas as pd
    >>> from bayeval._cli_output import print_compare
    >>> ranking = pd.DataFrame({"mean": [0.9]}, index=pd.Index(["a"], name="model"))
    >>> pairs = pd.DataFrame({"better": ["a"], "worse": ["b"]}).set_index(["better", "worse"])
    >>> print_compare(SimpleNamespace(table_format="csv"), ranking, pairs, None)
    table,model,mean,better,worse
    ranking,a,0.9,,
    pairs,,,a,b
    """
    if machine_readable(args):
        print(compare_csv(ranking, pairs))
    else:
        print(format_frame(ranking, args.table_format))
        print()
        print(format_frame(pairs, args.table_format))


def print_items(args, items) -> None:
    """Item ids on stdout: one a line, or with ``--format csv`` a CSV of one column ``item``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from bayeval._cli_output import print_items
    >>> print_items(SimpleNamespace(table_format="csv"), ["a", 7])
    item
    a
    7
    """
    if machine_readable(args):
        import pandas as pd

        print(pd.DataFrame({"item": list(items)}).to_csv(index=False).rstrip("\n"))
    else:
        for item in items:
            print(item)


def annotator_name(value):
    """``--annotator`` without the spaces around it ("ana " is "ana"); a CLIError for a blank one.

    Examples
    --------
    >>> from bayeval._cli_output import annotator_name
    >>> annotator_name("  ana "), annotator_name(None)
    ('ana', None)
    >>> annotator_name("   ")
    Traceback (most recent call last):
    ...
    bayeval._cli_store.CLIError: --annotator must be a name (who labeled); it holds only spaces. ...
    """
    if value is None:
        return None
    name = value.strip()
    if not name:
        from ._cli_store import CLIError

        raise CLIError("--annotator must be a name (who labeled); it holds only spaces. Give the name, or leave "
                       "--annotator out to record the labels without one.")
    return name


def strip_annotator(args) -> None:
    """``args.annotator`` through :func:`annotator_name`, where the command has ``--annotator``.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from bayeval._cli_output import strip_annotator
    >>> args = SimpleNamespace(annotator=" ana ")
    >>> strip_annotator(args); args.annotator
    'ana'
    """
    if hasattr(args, "annotator"):
        args.annotator = annotator_name(args.annotator)


def nothing_to_select(data, store=None, held=None) -> bool:
    """True, after saying so on stderr (and closing ``store``), when every item of ``data`` is vetted
    (or, ``held``: a mask of items an earlier batch proposed, waits for its label there).

    Examples
    --------
    >>> from bayeval.core.data import EvalData
    >>> from bayeval._cli_output import nothing_to_select
    >>> nothing_to_select(EvalData([0.9, 0.1], [1, 0]))
    True
    """
    if data.n_vetted == data.n_items:
        print("every item is vetted: nothing to select.", file=sys.stderr)
    elif held is not None and held[~data.vetted].all():
        print(f"every item not vetted ({data.n_items - data.n_vetted}) was proposed in an earlier batch and waits "
              "for its label there: nothing new to select. Label those items first.", file=sys.stderr)
    else:
        return False
    if store is not None:
        store.close()
    return True
