"""Renamed keywords: the old spelling keeps working for one release, with a warning."""

from __future__ import annotations

import functools
import sys
import warnings

__all__ = ["renamed_keywords", "warn_renamed", "moved_module"]


def warn_renamed(old: str, new: str, where: str, *, stacklevel: int | None = None) -> None:
    """Warn that ``old`` (a keyword, attribute, card key or flag) is now ``new``.

    The warning points at the first line outside bayeval unless ``stacklevel`` is given.
    """
    if stacklevel is None:
        stacklevel = _outside_bayeval()
    warnings.warn(
        f"{where}: `{old}` is deprecated and will be removed in the next release; "
        f"use `{new}` instead (same meaning).",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def renamed_keywords(**renames: str):
    """Decorator: accept each ``old=`` keyword as ``new=`` (``renamed_keywords(old="new")``),
    with a DeprecationWarning naming the new keyword; passing both is a TypeError."""

    def decorate(fn):
        where = f"{fn.__qualname__}()"

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            for old, new in renames.items():
                if old in kwargs:
                    if new in kwargs:
                        raise TypeError(
                            f"{where} got both `{old}` (the deprecated name) and `{new}`; "
                            f"pass only `{new}`."
                        )
                    warn_renamed(old, new, where)
                    kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)

        return wrapper

    return decorate


def _outside_bayeval() -> int:
    """The ``stacklevel`` of the first frame outside bayeval, seen from ``warn_renamed``:
    the warning points at the user's line, however deep inside bayeval it was raised."""
    frame = sys._getframe(2)  # the caller of warn_renamed
    level = 2
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] == "bayeval":
        frame = frame.f_back
        level += 1
    return level


def _outside_bayeval_and_imports() -> int:
    """Like :func:`_outside_bayeval` seen from ``moved_module``, also skipping the import
    machinery's frames: the warning points at the user's ``import`` line."""
    frame = sys._getframe(2)
    level = 2
    while frame is not None and (
        frame.f_globals.get("__name__", "").partition(".")[0] == "bayeval"
        or frame.f_code.co_filename.startswith("<frozen importlib")
    ):
        frame = frame.f_back
        level += 1
    return level


def moved_module(old: str, new: str, *, call: str | None = None):
    """Make module ``old`` an alias of module ``new`` for one release, with a warning.

    Called from the old module's file: imports ``new``, puts it in ``sys.modules`` under
    the old name (so every name, private ones included, keeps resolving), and warns.
    ``call``: the old module's package also exported a *function* of the old module's
    name (``bayeval.active.acis``); the alias is then callable as that function, so
    ``bayeval.active.acis(...)`` keeps working after the old module path was imported.
    """
    import importlib
    import types

    warnings.warn(
        f"the module `{old}` has moved to `{new}`; import from there "
        "(the old path is removed in the next release).",
        DeprecationWarning,
        stacklevel=_outside_bayeval_and_imports(),
    )
    module = importlib.import_module(new)
    if call is not None:
        fn = getattr(module, call)
        alias = types.ModuleType(old, module.__doc__)
        alias.__dict__.update({k: v for k, v in module.__dict__.items() if k not in ("__name__", "__spec__")})

        class _CallableModule(types.ModuleType):
            def __call__(self, *args, **kwargs):
                return fn(*args, **kwargs)

        alias.__class__ = _CallableModule
        module = alias
    sys.modules[old] = module
    return module
