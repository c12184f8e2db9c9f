"""Requests in words: coordinator -> (responder | what-if + responder | command | memory).

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

import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from agents.context import MemoryLike
from agents.coordinator import coordinate_state
from agents.engines.base import Engine, canonical_json
from agents.engines.base import input_hash as hash_parts
from agents.responder import respond
from agents.responder.followups import follow_ups
from agents.words.state import MissionState, from_executive
from executive.contracts import AgentRunRecord, HumanCommand, TraceSink, new_id
from executive.errors import ExecutiveError
from planner.model import drone_label

__all__ = ["answer", "make_asker"]

DEFAULT_ITERATIONS = 2000  # agents.words.whatif's, without importing the planner for a question

log = logging.getLogger(__name__)

Asker = Callable[[str, Any], Awaitable[dict[str, Any]]]


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


def _describe(constraints: dict[str, Any]) -> list[str]:
    lines = [
        f"move {m['target']} to {drone_label(m['to_drone'])}"
        for m in constraints.get("moves") or []
    ]
    for drone, targets in (constraints.get("forbidden") or {}).items():
        if targets:
            lines.append(f"forbid {', '.join(targets)} for {drone_label(drone)}")
    if constraints.get("required_targets"):
        lines.append(f"require {', '.join(constraints['required_targets'])}")
    return lines


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
) -> dict[str, Any]:
    """Answer the operator's ``text`` about ``state`` (see the module docstring).

    ``live`` is the running executive (commands apply to it; what-ifs plan from its world);
    for a stored state, ``world`` is the re-executed world it was read from.
    """
    started = time.perf_counter()
    read_memories, store = _memory_parts(memories)
    root = new_id()
    decision = coordinate_state(text, state)  # an impossible command is refused here
    intent = decision["intent"]
    errors = list(decision["errors"])
    out: dict[str, Any] = {
        "intent": intent,
        "answer": "",
        "numbers": [],
        "agent_runs": [root],
        "applied": False,
        "errors": errors,
        "warnings": list(decision["warnings"]),
        "run_id": state.run_id,
        "tick": state.tick,
    }
    children: list[str] = []
    root_error: str | None = None
    whatif_result = None  # a what-if's planned difference, for the follow-ups

    async def responder(question: str, whatif=None) -> None:
        """Ask the responder (with the what-if result, if any); fill ``out`` from it."""
        done = await respond(
            question,
            state,
            engine=engine,
            sink=sink,
            memories=read_memories,
            parent_run_id=root,
            timeout_s=timeout_s,
            whatif=whatif,
        )
        children.append(done.record.run_id)
        out["answer"] = done.output.answer
        out["numbers"] = [n.model_dump() for n in done.output.numbers]
        out["ids"] = list(done.output.ids)
        out["responder"] = {
            "engine": done.record.engine,
            "applied": done.applied,
            "error": done.error,
        }
        if done.error is not None and done.error.startswith(("invalid", "malformed")):
            out["warnings"].append(
                f"the {done.record.engine} engine's answer was not used"
                f" ({done.error}): the rules answer, from the state, is given instead"
            )

    if intent in ("question", "explain", "debug", "unknown"):
        if intent == "unknown":
            out["warnings"].append(
                "not recognised as a question, command, what-if or memory:"
                " answered as a question about the mission"
            )
        if errors:
            out["answer"] = "Cannot answer: " + "; ".join(errors) + "."
        else:
            await responder(text)
    elif intent == "what_if":
        if errors:
            out["answer"] = "Cannot plan this what-if: " + "; ".join(errors) + "."
        else:
            from agents.words.whatif import WhatIfError, read_budgets, what_if

            decision["what_if"] = read_budgets(text, decision["what_if"])

            t0 = time.perf_counter()
            try:
                if live is not None:
                    world, not_planned = live.sim.world, live.returning
                elif world is not None or state.over:  # over: planned from the start
                    not_planned = None
                else:
                    raise WhatIfError("what if: no world to plan from was given")
                result = await what_if(
                    decision["what_if"],
                    state,
                    world=world,
                    not_planned=not_planned,
                    iterations=iterations,
                    seed=seed,
                )
            except WhatIfError as exc:
                errors.append(str(exc))
                out["answer"] = f"Cannot plan this what-if: {str(exc).removeprefix('what if: ')}."
                _emit_planning(
                    sink, root, state, decision, None, t0, str(exc), iterations, seed, children
                )
            else:
                _emit_planning(
                    sink, root, state, decision, result, t0, None, iterations, seed, children
                )
                out["what_if"] = result.model_dump(mode="json")
                whatif_result = result
                await responder(text, result)
    elif intent in ("reallocate", "replan", "plan"):
        constraints = decision["constraints"]
        out["constraints"] = constraints
        out["regions"] = decision["regions"]
        lines = _describe(constraints)
        for region in decision["regions"]:
            lines.append(
                f"({region['region']} of the area {region['box']}:"
                f" {', '.join(region['targets']) or 'no open target'})"
            )
        what = "; ".join(lines) if lines else "replan the remainder from the checkpoints"
        if errors:
            out["answer"] = "Not applied: " + "; ".join(errors) + "."
        elif live is not None:
            live.command(HumanCommand("REPLAN", text, "operator"))
            out["applied"] = True
            out["answer"] = (
                f"Applying at the next tick: {what}. The remainder is replanned"
                " from the checkpoints with these constraints."
            )
        elif state.source == "stored":
            out["answer"] = (
                f"Would apply: {what}. This is a stored run (tick {state.tick}):"
                " nothing is replanned."
            )
        else:
            out["answer"] = f"Would apply: {what} (no live executive was given: not applied)."
        if decision["warnings"] and not errors:
            out["answer"] += " Note: " + "; ".join(decision["warnings"]) + "."
        out["numbers"] = [
            {
                "label": f"targets forbidden for {drone_label(d)}",
                "value": float(len(ts)),
                "unit": "",
            }
            for d, ts in constraints["forbidden"].items()
        ]
    elif intent == "memory":
        memory = decision["memory"]
        out["memory"] = memory
        if store is None:
            root_error = "no memory store"
            errors.append("memories cannot be stored here (no memory store)")
            out["answer"] = "Not stored: there is no memory store."
        else:
            try:
                saved = store.add(memory["kind"], memory["text"])
            except ExecutiveError as exc:
                errors.append(str(exc))
                out["answer"] = f"Not stored: {exc}."
            else:
                out["applied"] = True
                out["memory"] = saved.to_dict() if hasattr(saved, "to_dict") else memory
                out["answer"] = (
                    f"Stored {memory['kind']} #{getattr(saved, 'id', '?')}:"
                    f" {memory['text']} (injected into every agent prompt)."
                )
    if errors and root_error is None:
        root_error = "invalid: " + "; ".join(errors)
    out["agent_runs"] = [root, *children]
    out["follow_ups"] = follow_ups(text, state, intent=intent, whatif=whatif_result)
    sink.emit(
        AgentRunRecord(
            run_id=root,
            parent_run_id=None,
            mission_run_id=state.run_id,
            agent="coordinator",
            engine="rules",
            model=None,
            input_hash=hash_parts(text, str(state.tick)),
            input_size=len(text),
            tokens_in=None,
            tokens_out=None,
            duration_ms=(time.perf_counter() - started) * 1000,
            raw_output=None,
            validated_output=json.loads(canonical_json(decision)),
            clamp_actions=(),
            applied=bool(
                out["applied"]
                or (intent in ("question", "explain", "debug", "unknown", "what_if") and not errors)
            ),
            error=root_error,
            tick=state.tick,
        )
    )
    return out


def _emit_planning(
    sink, root, state, decision, result, t0, error, iterations, seed, children
) -> None:
    """The what-if's planning on the copy, as the route optimizer's trace row."""
    run_id = new_id()
    children.append(run_id)
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
    sink.emit(
        AgentRunRecord(
            run_id=run_id,
            parent_run_id=root,
            mission_run_id=state.run_id,
            agent="route_optimizer",
            engine="algorithmic",
            model="team_search",
            input_hash=hash_parts(
                canonical_json(decision["what_if"]), str(state.tick), str(iterations), str(seed)
            ),
            input_size=len(canonical_json(decision["what_if"])),
            tokens_in=None,
            tokens_out=None,
            duration_ms=(time.perf_counter() - t0) * 1000,
            raw_output=None,
            validated_output=json.loads(canonical_json(summary)) if summary else None,
            clamp_actions=(),
            applied=False,
            error=error,
            tick=state.tick,
        )
    )


def make_asker(
    engine: Engine,
    sink: TraceSink | None = None,
    memories=None,
    *,
    timeout_s: float = 20.0,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
) -> Asker:
    """The ``ask(text, host)`` callable ``MissionHost(ask=...)`` takes: answers about the
    host's live executive (traces to ``sink``, else to the executive's own sink)."""

    async def ask(text: str, host) -> dict[str, Any]:
        """Answer ``text`` about the host's executive, read as it is now (between ticks)."""
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
        )

    return ask
