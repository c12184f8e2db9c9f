"""The dashboard's doors: who holds the control token, which pages may open the live
websocket, and the security headers of every answer.

The token
    Commanding routes need ``Authorization: Bearer <token>`` (``deps.require_token``); the
    same header lets a reader see the ground truth (``deps.TruthDep``); a wrong one is a 401
    wherever it is sent. A browser cannot set headers on a websocket, so ``/ws/live`` also
    takes the token as a subprotocol: the page offers ``isr.live`` and
    ``isr.token.<the token, base64url without padding>``; the server selects ``isr.live``
    and never echoes the token. Never in the URL: addresses end up in logs and histories.
The Origin
    ``/ws/live`` serves a browser page only of its own origin: its ``Origin`` header must be
    ``http(s)://`` plus the ``Host`` it asked for. Others are refused with close code 1008
    (``errors.CrossOrigin``). A handshake without ``Origin`` is not from a browser page
    (browsers always send it) and is served, as for the CLI, the tests and scripts: it gets
    the public view unless it sends the token. (A page that rebinds its own name to this
    address passes the check; it still gets only the public view, as any reader does.)
The headers
    ``SecurityHeaders`` (the outermost ASGI layer of the app, so every answer has them, the
    500s included): ``Content-Security-Policy`` (``PAGE_CSP``: scripts, styles, connections
    and images from this origin only, no inline script or style, no framing; a route may set
    its own, as ``/docs`` does with ``DOCS_CSP``), ``X-Frame-Options: DENY``,
    ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer``,
    ``Cross-Origin-Opener-Policy`` and ``Cross-Origin-Resource-Policy: same-origin``, and
    ``Cache-Control: no-store`` on the API's answers (some carry the ground truth).
"""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dashboard.errors import CrossOrigin, WrongWsToken, WsRefusal
from dashboard.settings import DashboardSettings

__all__ = [
    "DOCS_CSP",
    "PAGE_CSP",
    "WS_SUBPROTOCOL",
    "WS_TOKEN_PREFIX",
    "LiveAccess",
    "SecurityHeaders",
    "bearer_token",
    "check_origin",
    "live_access",
    "token_matches",
    "ws_token",
]

WS_SUBPROTOCOL = "isr.live"
WS_TOKEN_PREFIX = "isr.token."

# The page: ES modules and one stylesheet from here; the websocket and the API here
# ('self' covers ws:// and wss:// of the same host in CSP 3); SVG drawn by script.
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
# Swagger UI (/docs): its bundle and the page's starter from here; it writes inline style
# attributes as it renders, and its stylesheet draws icons from data: URIs.
DOCS_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)

_HEADERS = (
    ("content-security-policy", PAGE_CSP),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("cross-origin-opener-policy", "same-origin"),
    ("cross-origin-resource-policy", "same-origin"),
)


# ----- the token ---------------------------------------------------------------------------


def token_matches(given: str, settings: DashboardSettings) -> bool:
    """Whether ``given`` is the control token (compared in constant time)."""
    return bool(given) and secrets.compare_digest(
        given.encode(), settings.token.get_secret_value().encode()
    )


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The token of an ``Authorization: Bearer`` header; None without the header, "" when it
    is not a Bearer one (never the token)."""
    header = headers.get("authorization")
    if header is None:
        return None
    scheme, _, given = header.partition(" ")
    return given.strip() if scheme.lower() == "bearer" else ""


def ws_token(headers: Mapping[str, str], subprotocols: list[str]) -> str | None:
    """The token a websocket handshake offers: its ``Authorization`` header, else its
    ``isr.token.<base64url>`` subprotocol; None when it offers none, "" when it is not
    readable (never the token)."""
    given = bearer_token(headers)
    if given is not None:
        return given
    for protocol in subprotocols:
        if protocol.startswith(WS_TOKEN_PREFIX):
            encoded = protocol[len(WS_TOKEN_PREFIX) :]
            try:
                raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
                return raw.decode()
            except (binascii.Error, ValueError):
                return ""
    return None


# ----- the live websocket's door -----------------------------------------------------------


def _origin_key(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin, the default port filled in; None if malformed."""
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        return None
    return parts.scheme, parts.hostname.lower(), port or (443 if parts.scheme == "https" else 80)


def check_origin(headers: Mapping[str, str], scheme: str) -> None:
    """Raise ``CrossOrigin`` unless the handshake has no ``Origin`` (not a browser page) or
    its ``Origin`` is this dashboard's own: ``http(s)://`` + the ``Host`` it asked for."""
    origin = headers.get("origin")
    if origin is None:
        return
    web = "https" if scheme in ("wss", "https") else "http"
    expected = f"{web}://{headers.get('host', '')}"
    own = _origin_key(expected)
    if own is None or _origin_key(origin) != own:
        raise CrossOrigin(origin, expected)


@dataclass(frozen=True)
class LiveAccess:
    """What one ``/ws/live`` handshake gets: the ground truth or not, the subprotocol to
    select (only ``isr.live``, when offered), or the refusal to close it with."""

    truth: bool
    subprotocol: str | None = None
    refusal: WsRefusal | None = None
    anonymous: bool = True  # no token given: counted against max_anonymous_viewers


def live_access(
    headers: Mapping[str, str], scheme: str, subprotocols: list[str], settings: DashboardSettings
) -> LiveAccess:
    """The door of ``/ws/live`` (see the module's docstring): the Origin first, then the
    token (a wrong one is refused; none means the public view unless ``show_truth``)."""
    subprotocol = WS_SUBPROTOCOL if WS_SUBPROTOCOL in subprotocols else None
    try:
        check_origin(headers, scheme)
        given = ws_token(headers, subprotocols)
        if given is not None and not token_matches(given, settings):
            raise WrongWsToken()
    except WsRefusal as refusal:
        return LiveAccess(False, subprotocol, refusal)
    return LiveAccess(
        settings.show_truth or given is not None, subprotocol, anonymous=given is None
    )


# ----- the headers -------------------------------------------------------------------------


class SecurityHeaders:
    """Add the security headers (see the module's docstring) to every HTTP answer that does
    not set them itself; websockets pass through."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        api = str(scope.get("path", "")).startswith("/api/")

        async def send_with_headers(message: Message) -> None:
            """The answer's start with the headers it lacks."""
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in _HEADERS:
                    if name not in headers:
                        headers[name] = value
                if api and "cache-control" not in headers:
                    headers["cache-control"] = "no-store"
            await send(message)

        await self.app(scope, receive, send_with_headers)
