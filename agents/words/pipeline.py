"""One dialogue pipeline: the operator's words -> the coordinator's typed decision -> the
answer, for every place words are asked.

Contract
--------
Consumes
    The operator's text and a ``Venue``: where the words are answered. Two venues exist: a
    mission state, live or stored (``agents.words.ask``: the live ``ask``, ``isr ask``) and
    a posted mission (``agents.words.posted``: ``POST /api/agent_solve``, which the web layer
    only adapts to HTTP).
Produces
    A ``Reply``: the typed ``CoordinatorDecision``, the answer, its cited numbers, the
    warnings and errors, what was applied, a what-if's difference, the plan a posted request
    is about, and the agent runs (the coordinator's root record first) through the venue's
    sink.
    With ``on_stage``, the stages as they happen (``agents.words.stages``): the decision
    (``plan``), what comes next (``thinking``), each step that takes time
    (``tool_call_start`` / ``tool_call_end``), then the answer in ``message`` deltas.
Behaviour, by the decision's intent (dispatched here, once)
    Any error in the words (an unknown id, a refused command): nothing is done, the answer
    says why. question / explain / debug / unknown -> the responder answers about the
    venue's state. what_if -> planned on a copy (``agents.words.whatif``) from the venue's
    ground, the responder reports the difference. plan / replan / reallocate -> the venue
    carries the command out (a live run: at the next tick; a posted mission: the agent
    chain plans it; a stored run: it says what would apply). memory -> the venue stores it
    (or says why it cannot).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agents.context import MemoryLike
from agents.coordinator.intent import Intent
from agents.coordinator.schema import CoordinatorDecision, planner_constraints
from agents.engines.base import Engine, canonical_json
from agents.engines.base import input_hash as hash_parts
from agents.responder import respond
from agents.tools import ToolContext
from agents.words.stages import (
    PlanStage,
    Stage,
    StageReport,
    Thinking,
    ToolCallEnd,
    ToolCallStart,
    deltas,
)
from agents.words.state import MissionState
from executive.contracts import AgentRunRecord, TraceSink, new_id
from planner.constraints import describe_constraints
from planner.model import Solution

if TYPE_CHECKING:  # a question never imports the what-if's planner
    from agents.words.whatif import WhatIfResult
    from sim import World

__all__ = [
    "ANSWERED",
    "PLAN_INTENTS",
    "Ground",
    "Reply",
    "Responder",
    "Venue",
    "constraint_report",
    "kept_orders",
    "order_lines",
    "run_words",
]

PLAN_INTENTS = (Intent.PLAN, Intent.REPLAN, Intent.REALLOCATE)
ANSWERED = (Intent.QUESTION, Intent.EXPLAIN, Intent.DEBUG, Intent.UNKNOWN)


@dataclass
class Ground:
    """What a what-if plans from: the state, its world (None when the run is over) and the
    drones no plan may task."""

    state: MissionState
    world: World | None
    not_planned: dict[str, str] | None = None


@dataclass
class Reply:
    """What the pipeline answered (see the module docstring)."""

    text: str
    decision: CoordinatorDecision
    root: str
    answer: str = ""
    numbers: list[dict[str, Any]] = field(default_factory=list)
    ids: list[str] | None = None
    responder: dict[str, Any] | None = None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    applied: bool = False
    what_if: WhatIfResult | None = None
    memory: dict[str, Any] | None = None
    plan: Solution | None = None  # the plan a posted request's answer is about
    plan_changed: bool = False
    reasons: list[str] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    state: MissionState | None = None  # the state the answer was read from
    root_error: str | None = None  # the root record's error, when not the words' errors
    # "what: why" for each constraint the venue could not honour (planner notes, violations)
    not_honoured: list[str] = field(default_factory=list)
    # the constraints of a plan request: {"applied": [...], "refused": [{constraint, reason}]}
    report: dict[str, Any] | None = None

    @property
    def intent(self) -> Intent:
        return self.decision.intent

    @property
    def agent_runs(self) -> list[str]:
        """The request's agent runs, the root first."""
        return [self.root, *self.children]


class Venue(Protocol):
    """Where the words are answered: what differs between a live run, a stored run and a
    posted mission. The pipeline does the rest."""

    @property
    def sink(self) -> TraceSink:
        """Where the request's agent runs are traced."""

    @property
    def run_id(self) -> str:
        """The mission run the words are about."""

    @property
    def tick(self) -> int:
        """The tick the words are read at."""

    @property
    def engine(self) -> Engine:
        """The responder's engine."""

    @property
    def timeout_s(self) -> float:
        """Seconds the responder may take."""

    @property
    def responder_tools(self) -> bool:
        """Whether the responder may call its read-only tools (``agents.tools``)."""

    def tool_context(self, state: MissionState) -> ToolContext:
        """What the responder's tools read about ``state`` (built between ticks)."""

    @property
    def iterations(self) -> int:
        """A what-if planner's iteration budget (reproducible)."""

    @property
    def seed(self) -> int:
        """A what-if planner's seed."""

    def memories(self) -> Iterable[MemoryLike]:
        """The memories the responder's prompt is given."""

    def decide(self, text: str) -> CoordinatorDecision:
        """The coordinator's decision on ``text`` over what this venue knows."""

    async def about(self, reply: Reply) -> MissionState:
        """The state a question (or a debug request) is answered about."""

    async def ground(self, reply: Reply) -> Ground:
        """What a what-if plans from; ``WhatIfError`` when there is nothing to plan from."""

    async def command(self, reply: Reply, respond: Responder) -> None:
        """Carry out a plan / replan / reallocate decision without errors; fills ``reply``."""

    def remember(self, reply: Reply) -> None:
        """Store (or refuse) a memory request; fills ``reply``."""

    def finish(self, reply: Reply) -> None:
        """The venue's last words on any reply (a debug diagnosis, a comparison)."""


Responder = Callable[..., Any]  # async (state, whatif=None) -> None


async def run_words(text: str, venue: Venue, on_stage: StageReport | None = None) -> Reply:
    """Answer ``text`` at ``venue`` (see the module docstring); ``on_stage`` hears each stage
    as it happens."""
    started = time.perf_counter()

    def report(stage: Stage) -> None:
        if on_stage is not None:
            on_stage(stage)

    @asynccontextmanager
    async def step(tool: str) -> AsyncIterator[None]:
        """``tool_call_start``, the step, ``tool_call_end`` (failed: with its error)."""
        report(ToolCallStart(tool=tool))
        t0 = time.perf_counter()
        before = len(reply.errors)
        try:
            yield
        except Exception as exc:
            report(ToolCallEnd(tool=tool, ok=False, duration_ms=_ms(t0), error=str(exc)))
            raise
        error = "; ".join(reply.errors[before:]) or None
        report(ToolCallEnd(tool=tool, ok=error is None, duration_ms=_ms(t0), error=error))

    decision = venue.decide(text)  # an impossible command is refused here
    reply = Reply(
        text=text,
        decision=decision,
        root=new_id(),
        errors=list(decision.errors),
        warnings=list(decision.warnings),
    )
    report(
        PlanStage(
            intent=str(decision.intent),
            orders=order_lines(decision),
            errors=reply.errors,
            warnings=reply.warnings,
        )
    )

    async def responder(state: MissionState, whatif: WhatIfResult | None = None) -> None:
        """Ask the responder about ``state`` (with the what-if result, if any)."""
        reply.state = state
        report(Thinking(text=f"answering from the mission state at tick {state.tick}"))
        async with step("responder"):
            done = await respond(
                text,
                state,
                engine=venue.engine,
                sink=venue.sink,
                memories=venue.memories,
                parent_run_id=reply.root,
                timeout_s=venue.timeout_s,
                whatif=whatif,
                tools=venue.tool_context(state) if venue.responder_tools else None,
                on_stage=report,
            )
        reply.children += [done.record.run_id, *done.tool_calls]
        reply.answer = done.output.answer
        reply.numbers = [n.model_dump() for n in done.output.numbers]
        reply.ids = list(done.output.ids)
        reply.responder = {
            "engine": done.record.engine,
            "applied": done.applied,
            "error": done.error,
        }
        if done.error is not None and done.error.startswith(("invalid", "malformed")):
            reply.warnings.append(
                f"the {done.record.engine} engine's answer was not used"
                f" ({done.error}): the rules answer, from the state, is given instead"
            )

    intent = decision.intent
    if intent == Intent.UNKNOWN:
        reply.warnings.append(
            "not recognised as a question, command, what-if or memory:"
            " answered as a question about the mission"
        )
    if reply.errors:
        verb = (
            "Cannot plan this what-if"
            if intent == Intent.WHAT_IF
            else "Not applied"
            if intent in PLAN_INTENTS
            else "Cannot answer"
        )
        reply.answer = f"{verb}: " + "; ".join(reply.errors) + "."
    elif intent in ANSWERED:
        await responder(await venue.about(reply))
    elif intent == Intent.WHAT_IF:
        report(Thinking(text="planning the what-if on a copy; the plan in force is not touched"))
        async with step("what_if_planner"):
            await _what_if(reply, venue, responder)
    elif intent in PLAN_INTENTS:
        report(
            Thinking(text=f"carrying out the {intent} under {len(order_lines(decision))} order(s)")
        )
        async with step("command"):
            await venue.command(reply, responder)
    elif intent == Intent.MEMORY:
        async with step("memory"):
            venue.remember(reply)
    if intent in PLAN_INTENTS:
        reply.report = constraint_report(reply)
    venue.finish(reply)
    venue.sink.emit(_root_record(reply, venue, started))
    for piece in deltas(reply.answer):  # the answer as it is final (after the venue's words)
        report(piece)
    return reply


def _ms(t0: float) -> float:
    return round((time.perf_counter() - t0) * 1000, 1)


def order_lines(decision: CoordinatorDecision) -> list[str]:
    """One line per order of the decision, as the planner's checks name them."""
    c = decision.constraints
    lines = describe_constraints(planner_constraints(decision))
    lines += [r.text for r in c.priority_rules]
    if c.keep is not None:
        lines.append("do not recompute routes" if c.keep == "routes" else "keep the allocation")
    return lines


def kept_orders(reply: Reply) -> None:
    """With "do not recompute routes" no other order of the words can be honoured: each is
    refused with that reason (never dropped)."""
    keep = reply.decision.constraints.keep
    said = "do not recompute routes" if keep == "routes" else "keep the allocation"
    for line in order_lines(reply.decision):
        if line != said:
            reply.not_honoured.append(f"{line}: the plan is kept as it is ({said})")


def constraint_report(reply: Reply) -> dict[str, Any]:
    """Every order of a plan request, applied or refused with its reason (never dropped):
    the coordinator's refusals, the venue's notes and violations; with an error in the
    words nothing is applied, and each order says so."""
    decision = reply.decision
    refused = [
        {"constraint": r.command, "reason": r.reason, "detail": r.detail} for r in decision.refused
    ]
    for note in reply.not_honoured:
        what, _, why = note.partition(": ")
        refused.append({"constraint": what, "reason": _reason_of(why), "detail": why})
    named = {r["constraint"] for r in refused}
    lines = order_lines(decision)
    if reply.errors:
        refused += [
            {
                "constraint": line,
                "reason": "not_applied",
                "detail": "the command was refused as a whole: " + "; ".join(reply.errors),
            }
            for line in lines
            if line not in named
        ]
        return {"applied": [], "refused": refused, "replaced": _replaced(decision)}
    applied = [line for line in lines if line not in named]
    # a priority rule is broken if one of its forbidden pairs is
    return {"applied": applied, "refused": refused, "replaced": _replaced(decision)}


def _replaced(decision: CoordinatorDecision) -> list[str]:
    return [f"{r.after} replaces {r.before} (the last order wins)" for r in decision.replaced]


def _reason_of(why: str) -> str:
    """The one-word class of a planner's reason (sensor, fuel, SAM, collected, frozen ...)."""
    low = why.lower()
    for word, reason in (
        ("kept as it is", "kept"),
        ("stored run", "stored_run"),
        ("no live executive", "not_live"),
        ("sense", "sensor"),
        ("sam", "excluded"),
        ("fuel", "fuel"),
        (" km", "fuel"),
        ("collected", "collected"),
        ("frozen", "frozen"),
        ("unknown", "unknown"),
        ("not visited", "not_visited"),
        ("visited by", "not_honoured"),
    ):
        if word in low:
            return reason
    return "not_honoured"


async def _what_if(reply: Reply, venue: Venue, responder: Responder) -> None:
    """The what-if planned on a copy, traced as the route optimizer's run; the responder
    reports the difference."""
    from agents.words.whatif import WhatIfError, read_budgets, what_if

    changes = read_budgets(reply.text, reply.decision.what_if)
    t0 = time.perf_counter()
    try:
        ground = await venue.ground(reply)
        result = await what_if(
            changes,
            ground.state,
            world=ground.world,
            not_planned=ground.not_planned,
            iterations=venue.iterations,
            seed=venue.seed,
        )
    except WhatIfError as exc:
        reply.errors.append(str(exc))
        reply.answer = f"Cannot plan this what-if: {str(exc).removeprefix('what if: ')}."
        _planning_record(reply, venue, changes, None, t0, str(exc))
        return
    _planning_record(reply, venue, changes, result, t0, None)
    reply.what_if = result
    await responder(ground.state, result)


def _planning_record(
    reply: Reply,
    venue: Venue,
    changes: list[dict[str, Any]],
    result: WhatIfResult | None,
    t0: float,
    error: str | None,
) -> None:
    """The what-if's planning on the copy, as the route optimizer's trace row."""
    run_id = new_id()
    reply.children.append(run_id)
    summary = None
    if result is not None:
        summary = {
            "changes": result.changes,
            "points_current": result.current.points,
            "points_control": result.control.points,
            "points_changed": result.changed.points,
            "diff": result.diff,
            "routes": {d: f.targets for d, f in result.changed.drones.items()},
        }
    written = canonical_json(changes)
    venue.sink.emit(
        AgentRunRecord(
            run_id=run_id,
            parent_run_id=reply.root,
            mission_run_id=venue.run_id,
            agent="route_optimizer",
            engine="algorithmic",
            model="team_search",
            input_hash=hash_parts(written, str(venue.tick), str(venue.iterations), str(venue.seed)),
            input_size=len(written),
            tokens_in=None,
            tokens_out=None,
            duration_ms=(time.perf_counter() - t0) * 1000,
            raw_output=None,
            validated_output=json.loads(canonical_json(summary)) if summary else None,
            clamp_actions=(),
            applied=False,
            error=error,
            tick=venue.tick,
        )
    )


def _root_record(reply: Reply, venue: Venue, started: float) -> AgentRunRecord:
    """The coordinator's record: the root of the request's agent tree (engine ``rules``:
    the pre-pass is deterministic)."""
    errors = reply.errors
    answered = reply.intent in (*ANSWERED, Intent.WHAT_IF)
    return AgentRunRecord(
        run_id=reply.root,
        parent_run_id=None,
        mission_run_id=venue.run_id,
        agent="coordinator",
        engine="rules",
        model=None,
        input_hash=hash_parts(reply.text, str(venue.tick)),
        input_size=len(reply.text),
        tokens_in=None,
        tokens_out=None,
        duration_ms=(time.perf_counter() - started) * 1000,
        raw_output=None,
        validated_output=reply.decision.model_dump(mode="json"),
        clamp_actions=(),
        applied=bool(reply.applied or (answered and not errors)),
        error=reply.root_error or ("invalid: " + "; ".join(errors) if errors else None),
        tick=venue.tick,
    )
