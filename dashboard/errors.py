"""Every error a client can cause, mapped to a 4xx JSON body in one place.

The body is always ``{"error": "<what went wrong>", "problems": [{"path": "$.command",
"message": "..."}]}`` (``problems`` may be empty). Paths are JSON paths into the request body
(``$.environment.targets[3].priority``); query and path parameters are named
``query.since`` / ``path.run_id``. Nothing a client sends produces a traceback or a 500: an
unexpected exception is logged here and answered with a 500 that says only that.

``install_error_handlers(app)`` registers the handlers; routes raise ``ApiError`` (or let
pydantic / ``ScenarioError`` / ``PlannerError`` / ``ExecutiveError`` escape).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from executive.errors import ExecutiveError
from planner.errors import PlannerError
from planner.scenario_io import ScenarioError, json_path

__all__ = ["ApiError", "install_error_handlers", "problems_of", "validation_problems"]

log = logging.getLogger(__name__)

_SOURCES = {"query": "query", "path": "path", "header": "header", "cookie": "cookie"}


class ApiError(Exception):
    """A request that cannot be served, with the status to answer and the problems found."""

    def __init__(self, status: int, error: str, problems: Sequence[tuple[str, str]] = (),
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.problems = [{"path": p, "message": m} for p, m in problems]
        self.headers = headers

    def response(self) -> JSONResponse:
        return JSONResponse({"error": self.error, "problems": self.problems},
                            status_code=self.status, headers=self.headers)


def _path(loc: Iterable[Any], prefix: Sequence[Any] = ()) -> str:
    loc = list(loc)
    if loc and loc[0] == "body":
        return json_path([*prefix, *loc[1:]])
    if loc and loc[0] in _SOURCES:
        return ".".join(str(p) for p in loc)
    return json_path([*prefix, *loc])


def validation_problems(errors: Iterable[dict], prefix: Sequence[Any] = ()) -> list[tuple[str, str]]:
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


def install_error_handlers(app: FastAPI) -> None:
    async def api_error(_: Request, exc: ApiError) -> JSONResponse:
        return exc.response()

    async def request_validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = validation_problems(exc.errors())
        first = f"{problems[0][0]}: {problems[0][1]}" if problems else "invalid request"
        return ApiError(422, f"invalid request: {first}", problems).response()

    async def pydantic_validation(_: Request, exc: ValidationError) -> JSONResponse:
        problems = validation_problems(exc.errors())
        return ApiError(422, "invalid request", problems).response()

    async def scenario_error(_: Request, exc: ScenarioError) -> JSONResponse:
        return ApiError(422, "invalid mission", problems_of(exc)).response()

    async def planner_error(_: Request, exc: PlannerError) -> JSONResponse:
        return ApiError(422, f"cannot plan this: {exc}").response()

    async def executive_error(_: Request, exc: ExecutiveError) -> JSONResponse:
        return ApiError(400, str(exc)).response()

    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        if exc.status_code == 404 and detail == "Not Found":
            detail = "no such endpoint (see /docs)"
        elif exc.status_code == 405:
            detail = "method not allowed on this endpoint (see /docs)"
        return JSONResponse({"error": detail, "problems": []}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return JSONResponse({"error": "internal error (logged on the server)", "problems": []},
                            status_code=500)

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(RequestValidationError, request_validation)
    app.add_exception_handler(ValidationError, pydantic_validation)
    app.add_exception_handler(ScenarioError, scenario_error)
    app.add_exception_handler(PlannerError, planner_error)
    app.add_exception_handler(ExecutiveError, executive_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Exception, unexpected)
