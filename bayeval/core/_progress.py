"""One progress bar per long task, shown only when the task takes more than about 2 s.

A fit that the vetting loop repeats takes a fraction of a second and shows nothing; a
cold fit (the compilation), a large importance sampling or a study shows one bar on
stderr with the elapsed time and an estimate of the time left, drawn with ``rich``
(PyMC's own progress library). In Jupyter the bar is rich's widget where ``ipywidgets``
is installed; without it (rich would only warn and draw nothing) it is a line of text
in the cell's output, updated in place about twice a second. Bars do not nest: while
one is shown (a study, a stack of candidates), the tasks inside it -- each fit and its
sampler, each metric pass -- show none of their own (:func:`covered`); nor do they
inside a task whose bar was switched off (``progressbar=False``) or inside
:class:`quiet`.
"""

from __future__ import annotations

import contextvars
import io
import threading
import time

__all__ = ["Bar", "covered", "quiet"]

#: seconds a task runs before its bar appears
DELAY = 2.0
#: seconds between redraws of the text bar in Jupyter (without ipywidgets)
JUPYTER_REFRESH = 0.5

_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("bayeval_progress", default=None)


def covered() -> bool:
    """Whether an enclosing task already shows a bar, or was told to show none (then show
    none of your own)."""
    return _ACTIVE.get() is not None


#: the mark of a task run with its bar switched off: the tasks inside it show none either
_SILENT = object()


class quiet:
    """``with quiet(): ...``: no bar inside (the command line's ``--quiet``)."""

    def __enter__(self):
        self._token = _ACTIVE.set(_SILENT)
        return self

    def __exit__(self, *exc) -> None:
        _ACTIVE.reset(self._token)


class Bar:
    """``with Bar("what", enabled=progressbar) as bar: ... bar.update(...)``.

    Nothing is drawn for a task that ends within :data:`DELAY` seconds, nor when
    ``enabled`` is false or an enclosing task has a bar. Past the delay the bar appears
    (from a helper thread, so a long blocking step such as a compilation shows it too)
    with the current description; ``update`` sets the description, the total (None:
    not known yet, no time estimate) and the work done. ``transient()`` makes it vanish
    when the task ends (a fit that hands over to the sampler's own bar).
    """

    def __init__(self, description: str, *, total: float | None = None, enabled: bool = True,
                 delay: float | None = None):
        self.enabled = bool(enabled)
        self.delay = DELAY if delay is None else float(delay)
        self._state = {"description": description, "total": total, "completed": 0.0}
        self._progress = None
        self._task = None
        self._token = None
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._transient = False
        self._thread = None
        self._text = None  # Jupyter without ipywidgets: the display handle of the text bar

    # ---------------------------------------------------------------- context

    def __enter__(self) -> Bar:
        if self.enabled and covered():
            self.enabled = False
        elif not self.enabled and not covered():
            self._token = _ACTIVE.set(_SILENT)  # switched off: so are the tasks inside (metric passes)
        self._t0 = time.perf_counter()
        if self.enabled:
            self._token = _ACTIVE.set(self)
            self._thread = threading.Thread(target=self._show_later, name="bayeval-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None
        self._done.set()
        with self._lock:
            if self._progress is not None:
                st = self._state
                if st["total"] is not None and exc[0] is None and not self._transient:
                    self._progress.update(self._task, completed=st["total"], total=st["total"])
                if self._text is not None:
                    self._text.update(_plain("" if self._transient else self._render()), raw=True)
                    self._text = None
                else:
                    self._progress.live.transient = self._transient
                    self._progress.stop()
                self._progress = None

    # ----------------------------------------------------------------- update

    def update(self, description: str | None = None, *, total: float | None | type(Ellipsis) = ...,
               completed: float | None = None, advance: float = 0.0) -> None:
        """Set what the task does now, its total and the work done (in the total's units)."""
        if not self.enabled:
            return
        st = self._state
        with self._lock:
            if description is not None:
                st["description"] = description
            if total is not ...:
                st["total"] = total
            if completed is not None:
                st["completed"] = float(completed)
            st["completed"] += advance
            if self._progress is not None:
                self._progress.update(self._task, description=st["description"], total=st["total"],
                                      completed=st["completed"])
        if self._progress is None and time.perf_counter() - self._t0 >= self.delay:
            self._show()

    def transient(self) -> None:
        """Remove the bar when the task ends (another bar takes over)."""
        self._transient = True

    # ---------------------------------------------------------------- drawing

    def _show_later(self) -> None:
        if not self._done.wait(self.delay):
            self._show()

    def _show(self) -> None:
        with self._lock:
            if self._progress is not None or self._done.is_set():
                return
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            st = self._state
            console = Console(stderr=True)
            as_text = console.is_jupyter and not _has_ipywidgets()
            if as_text:  # rich's Jupyter bar is an ipywidget; without it, a line of text
                console = Console(file=io.StringIO(), width=100, force_terminal=False, force_jupyter=False,
                                  color_system=None)
            self._progress = Progress(
                TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                TextColumn("left"), TimeRemainingColumn(), console=console, transient=False,
                auto_refresh=not as_text,
            )
            self._task = self._progress.add_task(st["description"], total=st["total"], completed=st["completed"])
            # the time already spent counts
            self._progress.tasks[0].start_time = time.monotonic() - (time.perf_counter() - self._t0)
            if as_text:
                from IPython.display import display

                self._text = display(_plain(self._render()), raw=True, display_id=True)
                threading.Thread(target=self._redraw, name="bayeval-progress-text", daemon=True).start()
            else:
                self._progress.start()

    def _render(self) -> str:
        """The bar as one line of plain text (Jupyter without ipywidgets)."""
        from rich.console import Console

        out = Console(file=io.StringIO(), width=100, force_terminal=False, force_jupyter=False, color_system=None)
        out.print(self._progress.get_renderable())
        return out.file.getvalue().rstrip()

    def _redraw(self) -> None:
        while not self._done.wait(JUPYTER_REFRESH):
            with self._lock:
                if self._text is None or self._progress is None:
                    return
                self._text.update(_plain(self._render()), raw=True)


def _plain(text: str) -> dict:
    return {"text/plain": text}


def _has_ipywidgets() -> bool:
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True

