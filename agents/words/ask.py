"""Requests in words about a mission state, live or stored: the one dialogue pipeline
(``agents.words.pipeline``) at a ``StateVenue``.

Contract
--------
Options
    ``answer(text, state, *, engine, sink, memories=None, live=None, world=None,
    timeout_s=20.0, iterations=2000, seed=0)``. ``engine`` answers the responder
    (``rules``, ``anthropic``, ``replay``); ``sink`` receives the trace records;
    ``memories`` is a ``MemoryStore`` (read for the prompts, written by a memory request), a
    callable returning memories (read only, unless it is a bound ``MemoryStore.active``:
    then its store is written too), a plain list (read only) or None; ``live`` the running
    ``Executive`` when the words are about a live mission; ``world`` the re-executed world
    of a stored ``state`` (``replay_trace``), which a what-if plans from when there is no
    ``live``. ``timeout_s``: seconds the responder may take; ``iterations`` and ``seed``: the
    what-if planner's budget, so its answer reproduces.
Consumes
    The operator's text and a ``MissionState`` (``agents.words.state``).
Produces
    A JSON-safe dict: ``intent``, ``answer`` (text), ``numbers`` (cited), ``agent_runs``
    (ids, the root first), ``applied``, ``errors``, ``warnings``, ``follow_ups`` (two or
    three next questions, from the state and the question: seed 004); ``constraints`` (and
    ``regions``) for a command, ``what_if`` (the difference) for a what-if, ``memory`` for a
    memory. Trace records (``AgentRunRecord``) through ``sink``: one root ``coordinator``
    record (engine ``rules``: the pre-pass is deterministic) and its children: the
    ``route_optimizer`` record of a what-if's planning on the copy (engine
    ``algorithmic``) and the ``responder`` call.
Behaviour
    question / explain / debug / unknown -> the responder answers from the state. what-if -> planned on a copy
    (``agents.words.whatif``), the responder reports the difference; the live plan is never
    touched. reallocate / replan / plan -> the constraints it would apply; with ``live`` (and no
    error in the words) they are applied through ``HumanCommand("REPLAN", text)`` and take
    effect at the next tick boundary. memory -> stored. Unknown ids, bad what-ifs: the
    answer says what is wrong, nothing is applied.
Lifecycle
    None: one call per request. ``make_asker`` builds the ``ask(text, host)`` callable of
    ``mission.live.MissionHost``; it reads the host's executive between ticks.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from agents.context import MemoryLike
from agents.coordinator import CoordinatorDecision, coordinate_state, only_drones
from agents.engines.base import Engine
from agents.responder.followups import follow_ups
from agents.tools import ToolContext
from agents.words.pipeline import (
    PLAN_INTENTS,
    Ground,
    Reply,
    Responder,
    kept_orders,
    order_lines,
    run_words,
)
from agents.words.stages import StageReport
from agents.words.state import MissionState, from_executive
from executive.contracts import HumanCommand, TraceSink
from executive.errors import ExecutiveError
from planner.model import drone_label

__all__ = ["StateVenue", "answer", "make_asker"]

DEFAULT_ITERATIONS = 2000  # agents.words.whatif's, without importing the planner for a question

log = logging.getLogger(__name__)

# (text, host, report): ``report`` hears each stage as its JSON (``agents.words.stages``)
Asker = Callable[[str, Any, Callable[[dict[str, Any]], None] | None], Awaitable[dict[str, Any]]]


def _memory_parts(memories) -> tuple[Callable[[], Iterable[MemoryLike]], Any]:
    """(read, store-or-None) from a MemoryStore, a callable or None."""
    if memories is None:
        return (lambda: ()), None
    if hasattr(memories, "active") and hasattr(memories, "add"):
        return memories.active, memories
    owner = getattr(memories, "__self__", None)  # a bound MemoryStore.active
    store = owner if owner is not None and hasattr(owner, "add") else None
    if callable(memories):
        return memories, store
    items = list(memories)
    return (lambda: items), None


def _describe(decision: CoordinatorDecision) -> list[str]:
    c = decision.constraints
    lines = [f"move {m.target} to {drone_label(m.to_drone)}" for m in c.moves]
    for drone, targets in c.forbidden.items():
        if targets:
            lines.append(f"forbid {', '.join(targets)} for {drone_label(drone)}")
    if c.required_targets:
        lines.append(f"require {', '.join(c.required_targets)}")
    lines += [f"keep {km:g} km in reserve for {drone_label(d)}" for d, km in c.fuel_reserve.items()]
    lines += [r.text for r in c.priority_rules]
    for region in decision.regions:
        lines.append(
            f"({region['region']} of the area {region['box']}:"
            f" {', '.join(region['targets']) or 'no open target'})"
        )
    return lines


@dataclass
class StateVenue:
    """A mission state as the pipeline's venue: live (``live``, the running executive:
    commands apply to it, what-ifs plan from its world) or stored (``world``: the
    re-executed world a what-if plans from)."""

    state: MissionState
    engine: Engine
    sink: TraceSink
    read_memories: Callable[[], Iterable[MemoryLike]]
    store: Any
    live: Any
    world: Any
    timeout_s: float
    iterations: int
    seed: int
    responder_tools: bool = False  # the responder may call its read-only tools

    @property
    def run_id(self) -> str:
        return self.state.run_id

    @property
    def tick(self) -> int:
        return self.state.tick

    def memories(self) -> Iterable[MemoryLike]:
        return self.read_memories()

    def tool_context(self, state: MissionState) -> ToolContext:
        """What the responder's tools read: ``state``, the run's world as it was read
        between ticks (a live run's is its snapshot at the question; each airborne drone
        measured from where it is). The responder's tools only read, so no remainder is cut
        from the live world: that cut runs on the event loop and would take a tick's time
        at swarm sizes (``bench/live_tools.py``); distances compile in a worker thread."""
        return ToolContext.for_state(state, iterations=self.iterations, seed=self.seed)

    def decide(self, text: str) -> CoordinatorDecision:
        return coordinate_state(text, self.state)

    async def about(self, reply: Reply) -> MissionState:
        return self.state

    async def ground(self, reply: Reply) -> Ground:
        from agents.words.whatif import WhatIfError

        if self.live is not None:
            return Ground(self.state, self.live.sim.world, self.live.returning)
        if self.world is not None or self.state.over:  # over: planned from the start
            return Ground(self.state, self.world)
        raise WhatIfError("what if: no world to plan from was given")

    async def command(self, reply: Reply, respond: Responder) -> None:
        decision, state = reply.decision, self.state
        lines = _describe(decision)
        what = "; ".join(lines) if lines else "replan the remainder from the checkpoints"
        keep = decision.constraints.keep
        if keep is not None:  # "do not recompute routes": answered from the plan in force
            said = "do not recompute routes" if keep == "routes" else "keep the allocation"
            if state.plan is None:
                reply.errors.append(f"{said}: there is no plan yet (plan first?)")
                reply.answer = f"Not applied: {said}: there is no plan yet — plan first?"
                return
            kept_orders(reply)
            await respond(state)
            reply.answer = (
                f"Not replanned ({said}): the plan in force is kept as it is." + " " + reply.answer
            )
            return
        if self.live is not None:
            self.live.command(HumanCommand("REPLAN", reply.text, "operator"))
            reply.applied = True
            # the loop reads the same words against the same plan at the next tick
            named = only_drones(decision, state.allocation)
            scope = (
                f"Only {', '.join(drone_label(d) for d in named)} are re-planned from the"
                " checkpoints; the other drones keep their routes."
                if named
                else "The remainder is replanned from the checkpoints with these constraints."
            )
            reply.answer = f"Applying at the next tick: {what}. {scope}"
        elif state.source == "stored":
            reply.answer = (
                f"Would apply: {what}. This is a stored run (tick {state.tick}):"
                " nothing is replanned."
            )
            reply.not_honoured += [
                f"{x}: a stored run: nothing is replanned" for x in order_lines(decision)
            ]
        else:
            reply.answer = f"Would apply: {what} (no live executive was given: not applied)."
            reply.not_honoured += [
                f"{x}: no live executive: not applied" for x in order_lines(decision)
            ]
        if decision.warnings:
            reply.answer += " Note: " + "; ".join(decision.warnings) + "."

    def remember(self, reply: Reply) -> None:
        memory = reply.decision.memory or {}
        reply.memory = memory
        if self.store is None:
            reply.root_error = "no memory store"
            reply.errors.append("memories cannot be stored here (no memory store)")
            reply.answer = "Not stored: there is no memory store."
            return
        try:
            saved = self.store.add(memory["kind"], memory["text"])
        except ExecutiveError as exc:
            reply.errors.append(str(exc))
            reply.answer = f"Not stored: {exc}."
        else:
            reply.applied = True
            reply.memory = saved.to_dict() if hasattr(saved, "to_dict") else memory
            reply.answer = (
                f"Stored {memory['kind']} #{getattr(saved, 'id', '?')}:"
                f" {memory['text']} (injected into every agent prompt)."
            )

    def finish(self, reply: Reply) -> None:
        return None


async def answer(
    text: str,
    state: MissionState,
    *,
    engine: Engine,
    sink: TraceSink,
    memories=None,
    live=None,
    world=None,
    timeout_s: float = 20.0,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
    on_stage: StageReport | None = None,
    responder_tools: bool = False,
) -> dict[str, Any]:
    """Answer the operator's ``text`` about ``state`` (see the module docstring).

    ``live`` is the running executive (commands apply to it; what-ifs plan from its world);
    for a stored state, ``world`` is the re-executed world it was read from. ``on_stage``
    hears the pipeline's stages as they happen (``run_words``). ``responder_tools``: the
    responder may call its read-only tools (``agents.tools``), each call traced under it.
    """
    read_memories, store = _memory_parts(memories)
    venue = StateVenue(
        state,
        engine,
        sink,
        read_memories,
        store,
        live,
        world,
        timeout_s,
        iterations,
        seed,
        responder_tools,
    )
    reply = await run_words(text, venue, on_stage)
    decision, intent = reply.decision, reply.intent
    out: dict[str, Any] = {
        "intent": str(intent),
        "answer": reply.answer,
        "numbers": reply.numbers,
        "agent_runs": reply.agent_runs,
        "applied": reply.applied,
        "errors": reply.errors,
        "warnings": reply.warnings,
        "run_id": state.run_id,
        "tick": state.tick,
    }
    if reply.responder is not None:
        out["ids"] = reply.ids
        out["responder"] = reply.responder
    if intent in PLAN_INTENTS:
        out["constraints"] = decision.constraints.model_dump(mode="json")
        out["regions"] = decision.regions
        out["numbers"] = [
            {
                "label": f"targets forbidden for {drone_label(d)}",
                "value": float(len(ts)),
                "unit": "",
            }
            for d, ts in decision.constraints.forbidden.items()
        ]
    if reply.report is not None:
        out["constraint_report"] = reply.report
    if reply.what_if is not None:
        out["what_if"] = reply.what_if.model_dump(mode="json")
    if reply.memory is not None:
        out["memory"] = reply.memory
    out["follow_ups"] = follow_ups(text, state, intent=str(intent), whatif=reply.what_if)
    return out


def make_asker(
    engine: Engine,
    sink: TraceSink | None = None,
    memories=None,
    *,
    timeout_s: float = 20.0,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
    responder_tools: bool = False,
) -> Asker:
    """The ``ask(text, host, report)`` callable ``MissionHost(ask=...)`` takes: answers about
    the host's live executive (traces to ``sink``, else to the executive's own sink);
    ``report`` (if any) hears each stage as its JSON. ``responder_tools``: the responder
    may call its read-only tools on the run's world (``RunConfig.responder_tools``)."""

    async def ask(
        text: str, host, report: Callable[[dict[str, Any]], None] | None = None
    ) -> dict[str, Any]:
        """Answer ``text`` about the host's executive, read as it is now (between ticks)."""
        on_stage = None if report is None else lambda s: report(s.model_dump(mode="json"))
        executive = host.executive
        state = from_executive(executive)
        return await answer(
            text,
            state,
            engine=engine,
            sink=sink or executive.sink,
            memories=memories,
            live=executive,
            timeout_s=timeout_s,
            iterations=iterations,
            seed=seed,
            on_stage=on_stage,
            responder_tools=responder_tools,
        )

    return ask
