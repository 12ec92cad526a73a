"""The vetting page as a small web application (Starlette), and the server that runs it (uvicorn).

Starlette and uvicorn are the optional extra ``vet`` (``pip install -e ".[vet]"``); they
are imported only when a page is made, so bayeval works without them.

Routes (every one but the page's own script and style needs the session token, as the
query parameter ``token`` or the header ``X-Bayeval-Token``):

==========================  ==============================================================
``GET /``                   the page
``GET /api/state``          estimate, its history, progress, whether a refit runs
``POST /api/next``          ``{"client"}``: the item to vet now, leased to the client
``POST /api/answer``        ``{"client", "item", "label": "y"|"n"}``: written to the store first
``POST /api/skip``          ``{"client", "item"}``
``POST /api/undo``          ``{"client"}``
``GET /media/{position}``   an item's image file (only files the card names, in its folder)
==========================  ==============================================================

Safety: the server binds to 127.0.0.1 unless told otherwise; a random token is part of
the printed URL; requests must send JSON; every response forbids inline scripts and
framing (``Content-Security-Policy``) and sends no referrer (so the token does not leak
to an image host). The page sets every value from the card as text, never as markup.

Examples
--------
>>> from bayeval.vet.app import create_app  # doctest: +SKIP
>>> app = create_app(vet, token="s3cret")   # doctest: +SKIP
>>> from starlette.testclient import TestClient  # doctest: +SKIP
>>> TestClient(app).get("/api/state", params={"token": "s3cret"}).json()["progress"]  # doctest: +SKIP
"""

from __future__ import annotations

import ipaddress
import json
import secrets
import socket
from importlib import resources

from .items import IMAGE_TYPES, MediaError
from .session import VetError, VetSession

__all__ = ["create_app", "serve", "new_token", "is_loopback", "EXTRA_HINT"]

EXTRA_HINT = 'the vetting page needs Starlette and uvicorn: pip install "bayeval[vet]" (in a clone: pip install -e ".[vet]")'

_MAX_BODY = 16_384  # a request's room besides its item id: the limit adds the card's longest id (as JSON)
_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' http: https:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
_HEADERS = {
    "Content-Security-Policy": _CSP,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
_ASSETS = {"vet.js": "text/javascript; charset=utf-8", "vet.css": "text/css; charset=utf-8"}


def new_token() -> str:
    """A random session token (URL-safe, 128 bits).

    Examples
    --------
    >>> from bayeval.vet.app import new_token
    >>> len(new_token()) >= 22
    True
    """
    return secrets.token_urlsafe(16)


def is_loopback(host: str) -> bool:
    """Whether ``host`` reaches this machine only (127.0.0.0/8, ::1, localhost).

    Examples
    --------
    >>> from bayeval.vet.app import is_loopback
    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _asset(name: str) -> str:
    return resources.files("bayeval.vet").joinpath(name).read_text(encoding="utf-8")


def create_app(vet: VetSession, *, token: str):
    """The Starlette application of the vetting page for ``vet``.

    Parameters
    ----------
    vet : VetSession
        The session the page serves.
    token : str
        The session token every request must carry (see the module docstring).

    Examples
    --------
    See the module docstring.
    """
    try:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
        from starlette.routing import Route
    except ImportError as exc:
        raise ImportError(f"{EXTRA_HINT} ({exc}).") from exc
    if not isinstance(vet, VetSession):
        raise TypeError(f"`vet` must be a VetSession, got {type(vet).__name__}.")
    if not isinstance(token, str) or len(token) < 8:
        raise ValueError("`token` must be a string of at least 8 characters (see new_token()).")

    # any id the card accepts can be answered and skipped: room for the longest, escaped as JSON
    # (json.dumps escapes non-ASCII as \uXXXX, never shorter than the UTF-8 bytes the page sends)
    longest = max((len(json.dumps(item)) for item in vet.view.position), default=0)
    max_body = _MAX_BODY + longest

    def respond(payload, status: int = 200):
        return JSONResponse(payload, status_code=status, headers=_HEADERS)

    def error(message: str, status: int):
        return respond({"error": message}, status)

    def authorized(request: Request) -> bool:
        given = request.headers.get("x-bayeval-token") or request.query_params.get("token") or ""
        return secrets.compare_digest(given.encode(), token.encode())

    def guard(handler):
        async def wrapped(request: Request):
            if not authorized(request):
                return error("This page needs its session token: open the URL that `bayeval vet` printed "
                             "(it ends in ?token=...). A restarted server prints a new one.", 403)
            try:
                return await handler(request)
            except VetError as exc:
                return error(str(exc), exc.status)
            except (OSError, TimeoutError) as exc:  # the store could not be written: nothing acknowledged
                return error(f"NOT SAVED: the label store could not be written ({exc}). Nothing was recorded "
                             "for this request; fix the problem and answer again.", 503)
            except ValueError as exc:  # the store refused the label (StoreDamagedError, ...)
                return error(f"NOT SAVED: {exc}", 503 if "damaged" in str(exc) else 400)
        return wrapped

    async def body(request: Request, keys: tuple, optional: tuple = ()) -> dict:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise VetError("send the request as JSON (Content-Type: application/json).", status=415)
        raw = await request.body()
        if len(raw) > max_body:
            raise VetError(f"request too large ({len(raw)} bytes; at most {max_body}: this card's longest item id "
                           f"as JSON, {longest} bytes, plus {_MAX_BODY} for the rest).", status=413)
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise VetError(f"the request body is not valid JSON ({exc}).") from None
        if not isinstance(data, dict):
            raise VetError(f"the request body must be a JSON object with {list(keys)}, got {type(data).__name__}.")
        missing = [k for k in keys if k not in data]
        unknown = [k for k in data if k not in keys + optional]
        if missing or unknown:
            raise VetError(f"the request body needs {list(keys)}" + (f" (optional: {list(optional)})" if optional else "")
                           + (f"; missing {missing}" if missing else "") + (f"; unknown {unknown}" if unknown else "")
                           + ".")
        return data

    async def page(request: Request):
        return HTMLResponse(_asset("page.html"), headers=_HEADERS)

    async def asset(request: Request):
        name = request.path_params["name"]
        if name not in _ASSETS:
            return error(f"no such file {name!r}.", 404)
        return Response(_asset(name), media_type=_ASSETS[name], headers=_HEADERS)

    async def state(request: Request):
        client = request.query_params.get("client")
        return respond(vet.state(client))

    async def next_item(request: Request):
        data = await body(request, ("client",))
        return respond(vet.next(data["client"]))

    async def answer(request: Request):
        data = await body(request, ("client", "item", "label"), ("annotator",))
        return respond(vet.answer(data["client"], data["item"], data["label"], annotator=data.get("annotator")))

    async def skip(request: Request):
        data = await body(request, ("client", "item"))
        return respond(vet.skip(data["client"], data["item"]))

    async def undo(request: Request):
        data = await body(request, ("client",))
        return respond(vet.undo(data["client"]))

    async def media(request: Request):
        try:
            path = vet.view.media_file(request.path_params["position"])
        except MediaError as exc:
            return error(str(exc), 404)
        return FileResponse(path, media_type=IMAGE_TYPES[path.suffix.lower()], headers=_HEADERS)

    routes = [
        Route("/", guard(page), methods=["GET"]),
        Route("/static/{name}", asset, methods=["GET"]),
        Route("/api/state", guard(state), methods=["GET"]),
        Route("/api/next", guard(next_item), methods=["POST"]),
        Route("/api/answer", guard(answer), methods=["POST"]),
        Route("/api/skip", guard(skip), methods=["POST"]),
        Route("/api/undo", guard(undo), methods=["POST"]),
        Route("/media/{position:int}", guard(media), methods=["GET"]),
    ]
    return Starlette(routes=routes)


def serve(vet: VetSession, *, host: str = "127.0.0.1", port: int = 8000, token: str | None = None,
          announce=print) -> None:
    """Serve the vetting page until interrupted (Ctrl-C); closes ``vet`` at the end.

    Parameters
    ----------
    vet : VetSession
    host : str, default "127.0.0.1"
        The address to listen on. Anything but a loopback address makes the page
        reachable from other machines (a warning is announced).
    port : int, default 8000
        0 picks a free port.
    token : str, optional
        The session token (default: a new random one).
    announce : callable
        Receives the lines to print (the URL to open, warnings).

    Examples
    --------
    >>> from bayeval.vet.app import serve
    >>> serve(vet, port=8000)  # doctest: +SKIP
    """
    try:
        import uvicorn
    except ImportError as exc:
        raise ImportError(f"{EXTRA_HINT} ({exc}).") from exc
    token = token or new_token()
    app = create_app(vet, token=token)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        sock = socket.create_server((host, port), family=family)
    except OSError as exc:
        raise OSError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); choose another --port "
                      "(or --port 0 for any free one).") from None
    try:
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        if not is_loopback(host):
            announce(f"WARNING: listening on {host}: the page is reachable from other machines. Anyone with the "
                     "URL (its token) can read the items and add labels; the traffic is not encrypted.")
        announce(f"vetting page: http://{shown}:{bound}/?token={token}")
        announce("press Ctrl-C to stop; every acknowledged answer is already in the label store.")
        config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=3)
        try:
            uvicorn.Server(config).run(sockets=[sock])
        except KeyboardInterrupt:  # uvicorn passes Ctrl-C on after its clean shutdown
            pass
        announce("stopped.")
    finally:
        sock.close()
        vet.close()
