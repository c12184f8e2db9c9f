"""Acting on the live run, behind the control token: commands, edits, speed and questions.

``/api/ask/stream`` answers the same question as Server-Sent Events (``dashboard.sse``).

Each sends one ``cmd`` message on the bus (``{"type": "command" | "edit" | "speed" |
"ask" | "stop", ...}``) and nothing else: the executive decides, stamps and applies. No
live run (a dashboard of stored runs, a mission not started yet) answers 409
(``errors.NoLiveRun``), so does a run that is over (ended, failed, crashed, interrupted:
``errors.RunEnded``); a command
that cannot reach the mission now (an MQTT link down, a run gone stale) 503 with
``Retry-After``, never a 202 for a message that would be lost; a bad body 422 naming the
field. An edit whose ids do not resolve against the world the dashboard mirrors (a
duplicate SAM id, an unknown target or drone) is refused at once by the rule the simulation
applies (``dashboard.edit_door``): 422 for an id that names nothing, 409 for one already
taken or a state already reached, naming the field.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agents.words.stages import STAGE, StageReport
from dashboard.deps import ContextDep, SettingsDep, ViewDep, require_token
from dashboard.edit_door import EditDoor, normal_edit
from dashboard.errors import (
    ApiError,
    CommandRefused,
    NoAnswer,
    NoLiveRun,
    NotTheLiveRun,
    RunEnded,
    ShuttingDown,
    validation_problems,
)
from dashboard.live_view import LiveView
from dashboard.sse import sse_response
from executive.bus import CMD, Bus
from executive.bus.messages import (
    CmdMessage,
    CommandMessage,
    EditMessage,
    SpeedMessage,
    StopMessage,
    new_command_id,
)
from executive.contracts import DRONE_COMMANDS, HumanCommandKind
from planner.edits import EDIT_OPS, parse_edit
from planner.geo import GeoOrigin, localize_edit
from planner.model import drone_label
from sim.pacing import MAX_SPEED, MIN_SPEED

__all__ = [
    "AskBody",
    "CommandBody",
    "EditDoorDep",
    "LiveRun",
    "LiveRunDep",
    "SpeedBody",
    "StopBody",
    "drone_problem",
    "edit_problems",
    "get_edit_door",
    "get_live_run",
    "router",
]

log = logging.getLogger(__name__)

router = APIRouter(prefix="/api", tags=["command"], dependencies=[Depends(require_token)])

# Set by whoever stamps an edit (the executive: the next tick; the operator is "operator").
_STAMP_FIELDS = ("t", "tick", "source")


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CommandBody(_Body):
    """A human command for the executive: for the mission, or (RETURN, HOLD, RESUME) for one
    drone."""

    command: HumanCommandKind
    text: str | None = Field(
        None,
        max_length=2000,
        description="operator words for CUT / REPLAN (the coordinator); AGENT_OFF / AGENT_ON:"
        " the agent of the planning chain to switch (strategist, allocator, critic)",
    )
    drone: str | None = Field(
        None,
        max_length=64,
        description="RETURN (home) and HOLD (where it is) need it; RESUME with it resumes that "
        "drone only (one the operator held); the other commands take none",
    )


class SpeedBody(_Body):
    """The pace of the simulation."""

    speed: float | None = Field(
        ...,
        ge=MIN_SPEED,
        le=MAX_SPEED,
        description=f"K times real time, {MIN_SPEED:g} to {MAX_SPEED:g}; null: as fast as possible",
    )


class AskBody(_Body):
    """A question about the live mission, for the coordinator."""

    question: str = Field(min_length=1, max_length=2000)

    @field_validator("question")
    @classmethod
    def _has_words(cls, question: str) -> str:
        # what the mission's host refuses (blank once stripped, control characters
        # included) is refused here, with a 422, not left to time out unanswered
        if not question.strip():
            raise ValueError("the question is blank")
        return question


class LiveRun:
    """The run the dashboard mirrors, as something to send ``cmd`` messages to."""

    def __init__(self, bus: Bus, view: LiveView, live: bool = True) -> None:
        self.bus = bus
        self.view = view
        self.live = live  # whether this dashboard serves a live run at all

    def ensure_live(self) -> None:
        """``NoLiveRun`` (409) when there is no live run (a dashboard of stored runs, or a
        mission not started yet), ``RunEnded`` (409) once the run is over; 503 when a command
        cannot reach the mission now (the link is down or the run stale: see
        ``LiveView.commands_blocked``)."""
        if self.view.run_id is None and self.bus.run_id is None:
            # nothing heard of a run, and the bus names none: nobody would hear the command
            raise NoLiveRun(self.live)
        if self.view.ended:
            raise RunEnded(self.view.run_id, (self.view.status or {}).get("state"))
        blocked = self.view.commands_blocked()
        if blocked is not None:
            raise ApiError(
                503,
                f"cannot reach the mission now: {blocked}; nothing was sent",
                headers={"Retry-After": "2"},
            )

    def send(self, message: CmdMessage) -> dict[str, Any]:
        """Publish ``message`` on ``cmd``; the answer names what was sent and to which run."""
        if message.id is None:  # the command's one id, from here to the executive
            message = message.model_copy(update={"id": new_command_id()})
        wire = message.wire()
        self.bus.publish(CMD, wire)
        return {"sent": wire, "run_id": self.view.run_id}


async def get_live_run(context: ContextDep) -> LiveRun:
    """The live run of the app's bus and mirror."""
    return LiveRun(context.bus, context.view, context.settings.live)


LiveRunDep = Annotated[LiveRun, Depends(get_live_run)]


async def get_edit_door(request: Request, context: ContextDep) -> EditDoor:
    """The app's edit door (made on first use: it remembers the edits it let through)."""
    door = getattr(request.app.state, "edit_door", None)
    if not isinstance(door, EditDoor) or door.view is not context.view:
        door = request.app.state.edit_door = EditDoor(context.view)
    return door


EditDoorDep = Annotated[EditDoor, Depends(get_edit_door)]

_EDIT_REFUSALS: dict[int | str, dict[str, Any]] = {
    409: {"description": "the edit's id is already taken, or the state already reached"},
    422: {"description": "a bad edit, or an id that names nothing in the known world"},
}


@router.post(
    "/commands",
    status_code=202,
    summary="PAUSE, RESUME, CUT, REPLAN, RESET, ACCEPT, REJECT; RETURN or HOLD one drone",
    responses={
        409: {"description": "no live run, the run is over, or the drone cannot do it now"},
        422: {"description": "a bad body, a missing or unknown drone"},
    },
)
async def command(body: CommandBody, run: LiveRunDep) -> dict[str, Any]:
    """Send a command to the executive (CUT and REPLAN may carry the operator's words;
    RETURN and HOLD name a drone, RESUME may). A drone's command is checked against the
    mirrored state first: an unknown drone is a 422, one that cannot do it now (landed,
    lost, not holding) a 409 with the reason; the executive decides at the next tick."""
    run.ensure_live()
    problem = drone_problem(body, run.view)
    if problem is not None:
        status, path, why = problem
        raise CommandRefused(status, body.command, path, why)
    message = CommandMessage(
        command=body.command, text=body.text or None, drone=body.drone, source="dashboard"
    )
    return run.send(message)


class StopBody(_Body):
    """Which run to end: the live one, named, so that a page showing another run (an older
    one, a watcher that moved on) cannot end this one by mistake."""

    run_id: str = Field(min_length=1, max_length=64, description="the live run's id")


@router.post(
    "/stop",
    status_code=202,
    summary="End the live mission now (a fork's Stop)",
    responses={409: {"description": "no live run, the run is over, or it is another run"}},
)
async def stop(body: StopBody, run: LiveRunDep) -> dict[str, Any]:
    """End the live mission after the current tick: it is recorded as ended, with its outcome
    so far, and replays like any run. A fork started from a dashboard then ends its process.
    The body names the run (409 when it is not the live one)."""
    run.ensure_live()
    live = run.view.run_id or run.bus.run_id
    if body.run_id != live:
        raise NotTheLiveRun(body.run_id, live)
    return run.send(StopMessage(reason="operator"))


def drone_problem(body: CommandBody, view: LiveView) -> tuple[int, str, str] | None:
    """Why a command's drone is wrong or cannot do it now, as (status, path, reason), by the
    state the dashboard mirrors; None when it may go (the executive still decides)."""
    name, drone = body.command, body.drone
    if drone is None:
        if name in DRONE_COMMANDS:
            return 422, "$.drone", f"{name} needs a drone's id"
        return None
    if name not in (*DRONE_COMMANDS, "RESUME"):
        return 422, "$.drone", f"{name} is for the whole mission: give no drone"
    drones = (view.scene or {}).get("drones") or {}
    if not drones:
        return None  # nothing mirrored yet: the executive checks it
    if drone not in drones:
        return 422, "$.drone", f"no drone {drone!r} in this mission"
    live = ((view.telemetry or {}).get("drones") or {}).get(drone) or {}
    status = live.get("status") or drones[drone].get("status")
    label = drone_label(drone)
    if name == "RETURN" and status not in ("flying", "holding"):
        return 409, "$.drone", f"{label} is {status}, not airborne"
    if name == "HOLD" and status != "flying":
        return 409, "$.drone", f"{label} is {status}, not flying"
    if name == "RESUME" and status != "holding":
        return 409, "$.drone", f"{label} is {status}, not holding"
    return None


@router.post(
    "/edits",
    status_code=202,
    summary="One environment edit, stamped at the next tick",
    description="One edit object of planner/edits.py: "
    + ", ".join(EDIT_OPS)
    + '. E.g. `{"op": "add_sam", "id": "S9", "pos": [50, 50], "range": 5}`. Its ids are '
    "checked against the known world when posted (422: unknown id, 409: id taken). On a "
    'mission with a geographic origin a position may be `"lat", "lon"` (or `"pos": {"lat", '
    '"lon"}`), converted to km as in a scenario file; without an origin that is a 422.',
    responses=_EDIT_REFUSALS,
)
async def edit(
    raw: Annotated[
        dict[str, Any],
        Body(examples=[{"op": "add_sam", "id": "S9", "pos": [50, 50], "range": 5}]),
    ],
    run: LiveRunDep,
    door: EditDoorDep,
) -> dict[str, Any]:
    """Check one edit (its form, then its ids against the known world), then send it for
    the executive to stamp and apply."""
    stamped = [
        (f"$.{k}", "set by the executive: an operator edit takes effect at the next tick")
        for k in _STAMP_FIELDS
        if k in raw
    ]
    if stamped:
        raise ApiError(422, "invalid edit", stamped)
    # lat/lon in km by the scenario loader's conversion, around the mission's own origin
    geo = (run.view.scene or {}).get("geo")
    raw, at_places = localize_edit(raw, GeoOrigin.model_validate(geo) if geo else None)
    if at_places and run.view.scene is None:  # no scene yet: its origin is not known here
        run.ensure_live()
        raise ApiError(
            503,
            "a lat/lon position needs the mission's origin, not received yet; nothing was sent",
            headers={"Retry-After": "2"},
        )
    if at_places:
        raise ApiError(
            422,
            "invalid edit",
            [(at, what) for at, _, what in (p.partition(": ") for p in at_places)],
        )
    raw, forms = normal_edit(raw)  # a target's "pos": [x, y] as the timeline takes it
    if forms:
        raise ApiError(422, "invalid edit", forms)
    try:
        parsed = parse_edit({**raw, "source": "operator"})
    except ValidationError as exc:
        raise ApiError(422, "invalid edit", edit_problems(exc, raw)) from None
    run.ensure_live()
    problem = door.check(parsed)
    if problem is not None:
        status = 409 if problem.kind == "conflict" else 422
        raise ApiError(
            status, f"edit refused: {problem.message}", [(problem.path, problem.message)]
        )
    out = run.send(EditMessage(edit=raw))
    door.passed(parsed)
    out["edit"] = parsed.describe()
    return out


@router.post("/speed", status_code=202, summary="Pace: K times real time, or null")
async def speed(body: SpeedBody, run: LiveRunDep) -> dict[str, Any]:
    """Set the pace of the live run."""
    run.ensure_live()
    return run.send(SpeedMessage(speed=body.speed))


@router.post("/ask", summary="Ask the coordinator about the live mission; waits for the answer")
async def ask(
    body: AskBody, run: LiveRunDep, view: ViewDep, settings: SettingsDep
) -> dict[str, Any]:
    """Publish the question and wait (this request only) for the coordinator's answer."""
    run.ensure_live()
    return await _answer(body.question, view, settings.ask_timeout_s)


@router.post(
    "/ask/stream",
    summary="As /api/ask, answered as Server-Sent Events: the answer's stages as they happen",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}},
)
async def ask_stream(
    body: AskBody, run: LiveRunDep, view: ViewDep, settings: SettingsDep
) -> StreamingResponse:
    """``text/event-stream`` (``dashboard.sse``): the coordinator's ``plan``, ``thinking``,
    ``tool_call_start`` / ``tool_call_end``, ``message`` deltas of the answer, then ``done``
    with what ``POST /api/ask`` answers, or ``error`` with a reason (no answer in time). No
    live run, a bad body or no token: the same statuses as ``/api/ask``, before any event."""
    run.ensure_live()

    async def work(report: StageReport) -> dict[str, Any]:
        def hear(stage: dict[str, Any]) -> None:
            try:
                report(STAGE.validate_python(stage))
            except ValidationError:  # a stage this dashboard does not know: not shown
                log.debug("unknown stage %r", stage)

        return await _answer(body.question, view, settings.ask_timeout_s, hear)

    return sse_response(work)


async def _answer(
    question: str,
    view: LiveView,
    timeout_s: float,
    on_stage: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Publish ``question`` and wait (this request only) for its answer."""
    ask_id, future = view.ask(question, on_stage)  # too many waiting: AskRejected, a 429
    try:
        # Only this request waits (on a future the mirror resolves); nothing blocks.
        answer = await asyncio.wait_for(future, timeout=timeout_s)
    except TimeoutError:
        raise NoAnswer(timeout_s) from None
    except asyncio.CancelledError:
        if future.cancelled():  # the dashboard is shutting down
            raise ShuttingDown() from None
        raise
    finally:
        view.forget(ask_id)
    return {"id": ask_id, **answer}


def edit_problems(exc: ValidationError, raw: dict[str, Any]) -> list[tuple[str, str]]:
    """pydantic's errors for a discriminated edit, without the ``op`` tag in the paths
    (also what ``isr edit --mqtt`` prints)."""
    op = raw.get("op")
    out = []
    for err in exc.errors():
        loc = list(err.get("loc", ()))
        kind = err.get("type", "")
        if kind in ("union_tag_not_found", "union_tag_invalid"):
            out.append(
                (
                    "$.op",
                    f"must be one of {', '.join(EDIT_OPS)}"
                    + ("" if op is None else f", got {op!r}"),
                )
            )
            continue
        if loc and loc[0] == op:
            loc = loc[1:]
        out.extend(validation_problems([{**err, "loc": tuple(loc)}]))
    return out
