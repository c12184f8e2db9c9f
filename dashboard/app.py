"""The dashboard's FastAPI app: the page, the REST API and the live websocket.

Contract
--------
Options
    ``create_app(bus, *, token, trace_url=None, ask_timeout_s=30.0,
    max_body_bytes=1_000_000, limits=Limits())``: ``bus`` is any ``executive.bus.Bus``
    (in-process or MQTT); ``token`` guards everything that commands; ``trace_url`` (a
    SQLAlchemy URL) serves ``/api/runs`` from the trace store.
Consumes
    The bus's out topics (one subscription for the ``LiveView`` mirror, one per websocket
    client). HTTP requests.
Produces
    ``cmd`` messages on the bus (``command``, ``edit``, ``speed``, ``ask``), never anything
    else: the dashboard does not reach into the sim or the executive. HTTP answers; the
    ``/ws/live`` stream (``dashboard.streams``).
Lifecycle
    Everything is built here or in the app's lifespan (mirror started, trace reader opened;
    on shutdown: websockets closed, mirror stopped, reader closed). Serve it with
    ``dashboard.server.start_dashboard``.

Reading is open; ``POST /api/commands``, ``/api/edits``, ``/api/speed`` and ``/api/ask`` need
``Authorization: Bearer <token>``. Errors: ``dashboard.errors`` (4xx JSON naming the field).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

from fastapi import Body, Depends, FastAPI, Query, Request, WebSocket
from fastapi.encoders import jsonable_encoder
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from swagger_ui_bundle import swagger_ui_path
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dashboard.errors import ApiError, install_error_handlers, validation_problems
from dashboard.live_view import AskRejected, LiveView
from dashboard.planning_api import Limits, planning_router
from dashboard.streams import LiveStreams
from executive.bus import CMD, Bus
from executive.errors import ExecutiveError
from planner.edits import EDIT_OPS, parse_edit

__all__ = ["create_app"]

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
# Set by whoever stamps an edit (the executive: the next tick; the operator is "operator").
_STAMP_FIELDS = ("t", "tick", "source")


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CommandBody(_Body):
    command: Literal["PAUSE", "RESUME", "CUT", "REPLAN", "RESET", "ACCEPT", "REJECT"]
    text: str | None = Field(None, max_length=2000,
                             description="operator words for CUT / REPLAN (the coordinator)")


class SpeedBody(_Body):
    speed: float | None = Field(..., gt=0, le=10_000,
                                description="K times real time; null: as fast as possible")


class AskBody(_Body):
    question: str = Field(min_length=1, max_length=2000)


class _BodyLimit:
    """Refuse request bodies above ``limit`` bytes with a 413, declared or streamed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    def _too_large(self) -> JSONResponse:
        return JSONResponse({"error": f"request body too large: at most {self.limit} bytes",
                             "problems": []}, status_code=413)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None:
            if declared.isdigit() and int(declared) > self.limit:
                return await self._too_large()(scope, receive, send)
            return await self.app(scope, receive, send)
        # No length given (chunked): read it here, up to the limit, then hand it on whole.
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                return await self._too_large()(scope, receive, send)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def create_app(bus: Bus, *, token: str, trace_url: str | None = None,
               ask_timeout_s: float = 30.0, max_body_bytes: int = 1_000_000,
               limits: Limits | None = None) -> FastAPI:
    if not token:
        raise ValueError("the dashboard needs a non-empty control token")
    view = LiveView(bus)
    streams = LiveStreams(bus, view)
    store: dict[str, Any] = {"reader": None, "error": None}
    started = time.monotonic()

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        await view.start()
        if trace_url:
            try:
                from executive.traces import TraceReader

                store["reader"] = await asyncio.to_thread(TraceReader, trace_url)
            except ExecutiveError as exc:  # the live view still works without traces
                store["error"] = str(exc)
                log.warning("dashboard: %s", exc)
        try:
            yield
        finally:
            await streams.close()
            await view.stop()
            if store["reader"] is not None:
                store["reader"].close()

    app = FastAPI(title="ISR mission dashboard", version="1", lifespan=lifespan, docs_url=None,
                  description="Live view, commands, edits and questions for a running ISR "
                              "mission, and the seed's stateless planning endpoints. Reading "
                              "is open; commanding needs `Authorization: Bearer TOKEN`.")
    install_error_handlers(app)
    app.add_middleware(_BodyLimit, limit=max_body_bytes)
    app.state.view = view
    app.state.streams = streams

    def require_token(request: Request) -> None:
        header = request.headers.get("authorization", "")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not given or \
                not secrets.compare_digest(given.strip().encode(), token.encode()):
            what = "missing" if not header else "wrong"
            raise ApiError(401, f"{what} control token: send 'Authorization: Bearer TOKEN' "
                                "(the token is printed when the dashboard starts)",
                           headers={"WWW-Authenticate": "Bearer"})

    def live_run() -> None:
        if view.ended:
            raise ApiError(409, f"run {view.run_id} has {view.status.get('state')}: there is "
                                "no live mission to act on")

    def send(message: dict[str, Any]) -> dict[str, Any]:
        bus.publish(CMD, message)
        return {"sent": message, "run_id": view.run_id}

    # ----- the page ---------------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    # Swagger UI from a package, not a CDN: /docs works with no internet, like the page.
    app.mount("/docs-static", StaticFiles(directory=swagger_ui_path), name="docs-static")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=app.openapi_url, title=f"{app.title} — API",
                                   swagger_js_url="/docs-static/swagger-ui-bundle.js",
                                   swagger_css_url="/docs-static/swagger-ui.css",
                                   swagger_favicon_url="/static/favicon.svg")

    # ----- reading (open) ---------------------------------------------------------------

    @app.get("/api/state", tags=["live"], summary="Latest scene, telemetry and mode")
    async def state() -> dict[str, Any]:
        return view.state()

    @app.get("/api/events", tags=["live"], summary="Events numbered above `since`")
    async def events(since: int = Query(0, ge=0, description="the last seq you have"),
                     limit: int = Query(1000, ge=1, le=5000)) -> dict[str, Any]:
        found = view.events_since(since, limit)
        return {"run_id": view.run_id, "events": found, "last_seq": view.last_seq}

    @app.get("/api/agents", tags=["live"], summary="Agent runs as trees (run_id -> children)")
    async def agents() -> dict[str, Any]:
        return {"run_id": view.run_id, "count": len(view.agents), "runs": view.agent_tree()}

    @app.get("/api/clients", tags=["live"], summary="Websocket clients and their drops")
    async def clients() -> dict[str, Any]:
        return {"clients": streams.clients(), "departed": streams.departed(),
                "frames_encoded": streams.cache.encoded}

    @app.get("/api/health", tags=["live"])
    async def health() -> dict[str, Any]:
        age = None if view.last_message_at is None else time.monotonic() - view.last_message_at
        return {"ok": True, "run_id": view.run_id,
                "state": (view.status or {}).get("state"), "mode": view.mode,
                "messages": view.received, "last_message_age_s": age,
                "mirror_dropped": view.dropped, "clients": len(streams.clients()),
                "uptime_s": time.monotonic() - started,
                "traces": trace_url is not None and store["reader"] is not None}

    def reader():
        if store["reader"] is None:
            why = store["error"] or "this dashboard has no trace store (start it with a --db URL)"
            raise ApiError(404, why)
        return store["reader"]

    @app.get("/api/runs", tags=["traces"], summary="Recorded runs, newest first")
    async def runs(limit: int = Query(50, ge=1, le=500)) -> dict[str, Any]:
        rows = await asyncio.to_thread(reader().runs, limit)
        return jsonable_encoder({"runs": rows})

    @app.get("/api/runs/{run_id}", tags=["traces"], summary="One run and its summary")
    async def run(run_id: str) -> dict[str, Any]:
        store_reader = reader()

        def load() -> dict[str, Any]:
            try:
                row = store_reader.run(run_id)
            except ExecutiveError as exc:
                raise ApiError(404, str(exc), [("path.run_id", str(exc))]) from None
            rid = row["run_id"]
            versions = [{k: v for k, v in pv.items() if k != "solution"}
                        | {"points": (pv.get("solution") or {}).get("total_points")}
                        for pv in store_reader.plan_versions(rid)]
            events = store_reader.events(rid)
            agent_runs = [{k: v for k, v in a.items() if k != "raw_output"}
                          for a in store_reader.agent_runs(rid)]
            return {"run": row, "plan_versions": versions, "events_count": len(events),
                    "events": events[-500:], "agent_runs": agent_runs}

        return jsonable_encoder(await asyncio.to_thread(load))

    # ----- commanding (token) -----------------------------------------------------------

    @app.post("/api/commands", tags=["command"], status_code=202,
              dependencies=[Depends(require_token)],
              summary="PAUSE, RESUME, CUT, REPLAN, RESET, ACCEPT or REJECT")
    async def command(body: CommandBody) -> dict[str, Any]:
        live_run()
        message = {"type": "command", "command": body.command, "source": "dashboard"}
        if body.text:
            message["text"] = body.text
        return send(message)

    @app.post("/api/edits", tags=["command"], status_code=202,
              dependencies=[Depends(require_token)],
              summary="One environment edit, stamped at the next tick",
              description="One edit object of planner/edits.py: " + ", ".join(EDIT_OPS) +
              ". E.g. `{\"op\": \"add_sam\", \"id\": \"S9\", \"pos\": [50, 50], \"range\": 5}`.")
    async def edit(raw: dict[str, Any] = Body(..., examples=[
            {"op": "add_sam", "id": "S9", "pos": [50, 50], "range": 5}])) -> dict[str, Any]:
        stamped = [(f"$.{k}", "set by the executive: an operator edit takes effect at the "
                              "next tick") for k in _STAMP_FIELDS if k in raw]
        if stamped:
            raise ApiError(422, "invalid edit", stamped)
        try:
            parsed = parse_edit({**raw, "source": "operator"})
        except ValidationError as exc:
            raise ApiError(422, "invalid edit", _edit_problems(exc, raw)) from None
        live_run()
        out = send({"type": "edit", "edit": raw})
        out["edit"] = parsed.describe()
        return out

    @app.post("/api/speed", tags=["command"], status_code=202,
              dependencies=[Depends(require_token)], summary="Pace: K times real time, or null")
    async def speed(body: SpeedBody) -> dict[str, Any]:
        live_run()
        return send({"type": "speed", "speed": body.speed})

    @app.post("/api/ask", tags=["command"], dependencies=[Depends(require_token)],
              summary="Ask the coordinator about the live mission; waits for the answer")
    async def ask(body: AskBody) -> dict[str, Any]:
        live_run()
        try:
            ask_id, future = view.ask(body.question)
        except AskRejected as exc:
            raise ApiError(429, str(exc)) from None
        try:
            # Only this request waits (on a future the mirror resolves); nothing blocks.
            answer = await asyncio.wait_for(future, timeout=ask_timeout_s)
        except asyncio.TimeoutError:
            raise ApiError(504, f"no answer within {ask_timeout_s:g} s (is the mission "
                                "running and answering questions?)") from None
        except asyncio.CancelledError:
            if future.cancelled():  # the dashboard is shutting down
                raise ApiError(503, "the dashboard is shutting down") from None
            raise
        finally:
            view.forget(ask_id)
        return {"id": ask_id, **answer}

    app.include_router(planning_router(limits))

    # ----- live stream ------------------------------------------------------------------

    @app.websocket("/ws/live")
    async def live(websocket: WebSocket) -> None:
        await streams.serve(websocket)

    return app


def _edit_problems(exc: ValidationError, raw: dict) -> list[tuple[str, str]]:
    """pydantic's errors for a discriminated edit, without the ``op`` tag in the paths."""
    op = raw.get("op")
    out = []
    for err in exc.errors():
        loc = list(err.get("loc", ()))
        kind = err.get("type", "")
        if kind in ("union_tag_not_found", "union_tag_invalid"):
            out.append(("$.op", f"must be one of {', '.join(EDIT_OPS)}"
                        + ("" if op is None else f", got {op!r}")))
            continue
        if loc and loc[0] == op:
            loc = loc[1:]
        out.extend(validation_problems([{**err, "loc": tuple(loc)}]))
    return out
