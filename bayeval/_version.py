"""bayeval's version and the one provenance record of its outputs.

A report's "Made on ..." line and a saved fit's ``bayeval_versions`` /
``bayeval_provenance`` attributes are read from :func:`provenance`: the installed
versions of the packages that decide the numbers (:func:`dependency_versions`), the
date and, for an :class:`~bayeval.EvalData`, the SHA-256 of its content
(:meth:`~bayeval.EvalData.fingerprint`). This module imports nothing of bayeval.
"""

from __future__ import annotations

__version__ = "0.1.0.dev0"

#: The packages whose versions decide a fit's numbers, in the order a report lists them.
PACKAGES = ("bayeval", "pymc", "pytensor", "numpy", "arviz", "xarray")
#: How a report spells them.
DISPLAY = {"bayeval": "bayeval", "pymc": "PyMC", "pytensor": "PyTensor", "numpy": "NumPy", "arviz": "ArviZ",
           "xarray": "xarray"}

__all__ = ["__version__", "PACKAGES", "DISPLAY", "dependency_versions", "provenance"]


def dependency_versions() -> dict[str, str]:
    """Installed versions of :data:`PACKAGES`, ``{package: version}`` ("unknown" where none).

    Examples
    --------
    >>> from bayeval._version import __version__, dependency_versions
    >>> v = dependency_versions()
    >>> list(v)[:2], v["bayeval"] == __version__
    (['bayeval', 'pymc'], True)
    """
    from importlib import metadata

    out = {}
    for pkg in PACKAGES:
        if pkg == "bayeval":
            out[pkg] = __version__
            continue
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "unknown"
    return out


def provenance(data=None) -> dict:
    """What made an output: ``{"versions": ..., "date": "YYYY-MM-DD", "data_sha256": ...}``.

    ``data_sha256`` is ``data.fingerprint()`` where the data container has one (an
    :class:`~bayeval.EvalData`), else None.
    """
    import datetime

    fingerprint = getattr(data, "fingerprint", None)
    return {
        "versions": dependency_versions(),
        "date": datetime.date.today().isoformat(),
        "data_sha256": fingerprint() if callable(fingerprint) else None,
    }
