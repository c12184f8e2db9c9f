"""Every error a client can cause, mapped to a 4xx JSON body in one place.

The body is always ``{"error": "<what went wrong>", "problems": [{"path": "$.command",
"message": "..."}]}`` (``problems`` may be empty). Paths are JSON paths into the request body
(``$.environment.targets[3].priority``); query and path parameters are named
``query.since`` / ``path.run_id``. Nothing a client sends produces a traceback or a 500: an
unexpected exception is logged here and answered with a 500 that says only that; a trace
store whose row cannot be read (``TraceDamaged``) is a 500 that says which row, since the
fault is the store's and the reason is the operator's to act on.

Routes raise an ``ApiError`` (one of the named ones below when the case has a name, so that
every status code and message of the dashboard is written here) or let a domain error
escape: pydantic's ``ValidationError``, ``ScenarioError``, ``PlannerError``,
``ExecutiveError``, ``AskRejected``. ``api_error_for(exc)`` is the one mapping from an
exception to its answer; ``install_error_handlers(app)`` registers it.

The live websocket answers with close codes, also named here: a cross-origin page is refused
with ``WS_POLICY_VIOLATION`` (1008), a wrong control token with ``WS_WRONG_TOKEN`` (4401),
both with a reason (``WsRefusal``); a client that goes away is forgotten, one that stops
reading is dropped (it can no longer be sent a close frame), and the server closes every
stream with ``WS_GOING_AWAY`` when it shuts down.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from dashboard.live_view import AskRejected
from executive.errors import ExecutiveError, TraceDamaged
from planner.errors import PlannerError
from planner.scenario import ScenarioError, json_path

__all__ = [
    "WS_GOING_AWAY",
    "WS_POLICY_VIOLATION",
    "WS_TRY_AGAIN_LATER",
    "WS_WRONG_TOKEN",
    "ApiError",
    "BadRange",
    "BodyTooLarge",
    "CannotFork",
    "CommandRefused",
    "CrossOrigin",
    "NoAnswer",
    "NoLiveRun",
    "NoTraceStore",
    "NotTheLiveRun",
    "RunEnded",
    "ShuttingDown",
    "TooManyViewers",
    "Unauthorized",
    "UnknownRun",
    "WrongWsToken",
    "WsRefusal",
    "api_error_for",
    "install_error_handlers",
    "problems_of",
    "validation_problems",
]

log = logging.getLogger(__name__)

WS_GOING_AWAY = 1001  # the close code of every live stream when the dashboard stops
WS_POLICY_VIOLATION = 1008  # a websocket opened by a page of another origin
WS_WRONG_TOKEN = 4401  # a websocket that offered a wrong control token (4000-4999: ours)
WS_TRY_AGAIN_LATER = 1013  # RFC 6455 via IANA: the server is at capacity for this client

_SOURCES = {"query": "query", "path": "path", "header": "header", "cookie": "cookie"}


class ApiError(Exception):
    """A request that cannot be served, with the status to answer and the problems found."""

    def __init__(
        self,
        status: int,
        error: str,
        problems: Sequence[tuple[str, str]] = (),
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.problems = [{"path": p, "message": m} for p, m in problems]
        self.headers = headers

    def response(self) -> JSONResponse:
        """The JSON answer: ``{"error", "problems"}`` with this status and headers."""
        return JSONResponse(
            {"error": self.error, "problems": self.problems},
            status_code=self.status,
            headers=self.headers,
        )


# ----- the named cases ---------------------------------------------------------------------


class Unauthorized(ApiError):
    """401: a commanding request without the control token, or with the wrong one."""

    def __init__(self, *, missing: bool) -> None:
        super().__init__(
            401,
            f"{'missing' if missing else 'wrong'} control token: send 'Authorization: Bearer "
            "TOKEN' (the token is printed when the dashboard starts)",
            headers={"WWW-Authenticate": "Bearer"},
        )


class RunEnded(ApiError):
    """409: a command, edit, speed or question for a run that has ended or crashed."""

    def __init__(self, run_id: str | None, state: object) -> None:
        super().__init__(409, f"run {run_id} has {state}: there is no live mission to act on")


class NoLiveRun(ApiError):
    """409: a command, edit, speed, stop or question on a dashboard with no live run (yet)."""

    def __init__(self, live: bool) -> None:
        super().__init__(
            409,
            "no live run yet: the mission has not started; nothing was sent"
            if live
            else "no live run: this dashboard serves the stored runs of its trace store "
            "(open one from Runs, or fork one to fly it again); nothing was sent",
        )


class CommandRefused(ApiError):
    """422 (a drone missing, unknown, or given to a fleet command) or 409 (the drone cannot
    do it now: landed, lost, not holding): a command refused at the door, naming the field."""

    def __init__(self, status: int, command: str, path: str, reason: str) -> None:
        super().__init__(status, f"{command} refused: {reason}", [(path, reason)])


class NotTheLiveRun(ApiError):
    """409: a stop for a run other than the live one (a stale page, a watcher that moved on)."""

    def __init__(self, given: str, live: str | None) -> None:
        super().__init__(
            409,
            f"run {given} is not the live run ({live}): nothing was sent",
            [("$.run_id", f"the live run is {live}")],
        )


class NoTraceStore(ApiError):
    """404: ``/api/runs`` on a dashboard without a trace store (or whose store failed)."""

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(
            404, reason or "this dashboard has no trace store (start it with a --db URL)"
        )


class UnknownRun(ApiError):
    """404: no recorded run matches the ``run_id`` in the path."""

    def __init__(self, reason: str) -> None:
        super().__init__(404, reason, [("path.run_id", reason)])


class BadRange(ApiError):
    """422: a tick range or tick a stored run cannot answer (past its end, reversed, or too
    many rows at once)."""

    def __init__(self, field: str, reason: str, where: str = "query") -> None:
        super().__init__(422, f"{field}: {reason}", [(f"{where}.{field}", reason)])


class CannotFork(ApiError):
    """409: this dashboard has no way to start runs, or the fork could not start (a 4xx,
    not a 501: nothing a client sends gets a 5xx)."""

    def __init__(self, reason: str, status: int = 409) -> None:
        super().__init__(status, reason)


class NoAnswer(ApiError):
    """504: a question that got no answer in time."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__(
            504,
            f"no answer within {timeout_s:g} s (is the mission running and answering questions?)",
        )


class ShuttingDown(ApiError):
    """503: a request the dashboard gave up on because it is stopping."""

    def __init__(self) -> None:
        super().__init__(503, "the dashboard is shutting down")


class BodyTooLarge(ApiError):
    """413: a request body above the app's limit (``dashboard.body_limit``)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"request body too large: at most {limit} bytes")


# ----- the live websocket's refusals -------------------------------------------------------


class WsRefusal(Exception):
    """A websocket the dashboard will not serve: closed at once with ``code`` and ``reason``
    (at most 123 bytes, what a close frame can carry)."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason.encode()[:123].decode(errors="ignore")


class CrossOrigin(WsRefusal):
    """1008: a browser page of another origin (its ``Origin`` is not this dashboard's)."""

    def __init__(self, origin: str, expected: str) -> None:
        super().__init__(
            WS_POLICY_VIOLATION, f"cross-origin websocket refused: {origin[:40]} is not {expected}"
        )


class WrongWsToken(WsRefusal):
    """4401: a websocket that offered a control token, the wrong one."""

    def __init__(self) -> None:
        super().__init__(WS_WRONG_TOKEN, "wrong control token")


class TooManyViewers(WsRefusal):
    """1013: one more viewer without the token than ``max_anonymous_viewers`` allows."""

    def __init__(self, cap: int) -> None:
        super().__init__(
            WS_TRY_AGAIN_LATER,
            f"too many viewers without the token ({cap}): try again later, or connect with it",
        )


# ----- problems as (path, message) pairs -----------------------------------------------------


def _path(loc: Iterable[Any], prefix: Sequence[Any] = ()) -> str:
    loc = list(loc)
    if loc and loc[0] == "body":
        return json_path([*prefix, *loc[1:]])
    if loc and loc[0] in _SOURCES:
        return ".".join(str(p) for p in loc)
    return json_path([*prefix, *loc])


def validation_problems(
    errors: Iterable[Mapping[str, Any]], prefix: Sequence[Any] = ()
) -> list[tuple[str, str]]:
    """pydantic / FastAPI error dicts as (JSON path, message) pairs."""
    out = []
    for err in errors:
        message = str(err.get("msg", "invalid"))
        if err.get("type") == "json_invalid":
            ctx = err.get("ctx") or {}
            message = f"malformed JSON: {ctx.get('error', message)}"
            out.append(("$", message))
            continue
        if err.get("type") == "extra_forbidden":
            message = "unknown field"
        out.append((_path(err.get("loc", ()), prefix), message))
    return out


def problems_of(exc: ScenarioError) -> list[tuple[str, str]]:
    """``"$.a.b: must be ..."`` lines as (path, message) pairs."""
    out = []
    for line in exc.problems:
        path, sep, message = line.partition(": ")
        out.append((path, message) if sep and path.startswith("$") else ("$", line))
    return out


# ----- the one mapping ---------------------------------------------------------------------


def api_error_for(exc: Exception) -> ApiError:
    """The answer to an exception that escaped a route (or the app's own HTTP errors)."""
    match exc:
        case ApiError():
            return exc
        case RequestValidationError():
            problems = validation_problems(exc.errors())
            first = f"{problems[0][0]}: {problems[0][1]}" if problems else "invalid request"
            return ApiError(422, f"invalid request: {first}", problems)
        case ValidationError():
            return ApiError(422, "invalid request", validation_problems(exc.errors()))
        case ScenarioError():  # before PlannerError: it is one
            return ApiError(422, "invalid mission", problems_of(exc))
        case PlannerError():
            return ApiError(422, f"cannot plan this: {exc}")
        case AskRejected():
            return ApiError(429, str(exc))
        case TraceDamaged():  # the store's fault, not the request's: a 500 that says why
            log.error("%s", exc)
            return ApiError(500, str(exc))
        case ExecutiveError():
            return ApiError(400, str(exc))
        case StarletteHTTPException():
            detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
            if exc.status_code == 404 and detail == "Not Found":
                detail = "no such endpoint (see /docs)"
            elif exc.status_code == 405:
                detail = "method not allowed on this endpoint (see /docs)"
            headers = getattr(exc, "headers", None)
            return ApiError(exc.status_code, detail, headers=dict(headers) if headers else None)
        case _:
            return ApiError(500, "internal error (logged on the server)")


async def _answer(_: Request, exc: Exception) -> Response:
    return api_error_for(exc).response()


async def _unexpected(request: Request, exc: Exception) -> Response:
    log.exception("unexpected error on %s %s", request.method, request.url.path)
    return ApiError(500, "internal error (logged on the server)").response()


_HANDLED: tuple[type[Exception], ...] = (
    ApiError,
    RequestValidationError,
    ValidationError,
    ScenarioError,
    PlannerError,
    AskRejected,
    ExecutiveError,
    StarletteHTTPException,
)


def install_error_handlers(app: FastAPI) -> None:
    """Answer every exception of ``_HANDLED`` through ``api_error_for``, and anything else
    with a logged 500."""
    for kind in _HANDLED:
        app.add_exception_handler(kind, _answer)
    app.add_exception_handler(Exception, _unexpected)
