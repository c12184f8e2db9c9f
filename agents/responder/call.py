"""The responder call: the prompt, the engine raced against a deadline, the answer's checks.

``respond(...)`` asks an ``Engine`` once (rules: the deterministic answer; anthropic: tool
use) within ``timeout_s``. The reply must validate as a ``ResponderOutput``, name only ids
the state knows (in ``ids`` or in the text) and state only numbers the state supports
(``numbers``: in the text and in ``numbers``, and a drone's margin, fuel, budget, fuel used
or points must be that drone's): an answer about a target that does not exist, or one that
says "D1 has 999 km margin", is not passed on: the rules answer is given instead and the
reason is traced. On any failure the rules answer stands; either way one ``AgentRunRecord`` is
emitted to the sink (``applied``, ``error``, the raw reply, tokens, duration).

With ``tools`` (an ``agents.tools.ToolContext``) the engine may first call the responder's
tools (read-only: ``agents.tools.registry.ROLE_TOOLS``) within ``max_tool_calls``, each
traced under the responder's record; the rules engine makes ``tool_plan``'s calls (the
mission overview, and the state of each drone the question names). The answer is checked
as without tools.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from agents.context import HARD_CONSTRAINTS, MemoryLike, format_memories
from agents.engines.base import AgentCall, Engine, call_validated
from agents.engines.tool_loop import call_with_tools
from agents.responder.answers import responder_rules
from agents.responder.context import state_context
from agents.responder.numbers import number_problems, supported
from agents.responder.questions import Allocation, Debug, Order, topic_of
from agents.responder.role import RESPONDER_PROMPT, RESPONDER_TOOL, TOOLS_NOTE, ResponderOutput
from agents.tools import DEFAULT_MAX_CALLS, ToolContext, ToolSession
from agents.words.stages import StageReport
from agents.words.state import MissionState
from executive.contracts import AgentRunRecord, TraceSink, new_id

__all__ = ["NUMBERS_ERROR", "Responded", "respond", "tool_plan"]

# the error of an engine answer that cites numbers the state does not support
NUMBERS_ERROR = "invalid: numbers the state does not support"


@dataclass
class Responded:
    """What one responder call came to: the answer given, whose it is, and its trace record."""

    output: ResponderOutput  # the engine's valid answer, or the rules answer
    applied: bool  # True when the engine's answer is the one given
    error: str | None  # why the engine's answer was not used ("kind: message")
    record: AgentRunRecord
    tool_calls: list[str] = field(default_factory=list)  # their trace rows' run ids, in order


def _known_ids(state: MissionState) -> set[str]:
    ids = {t.id for t in state.environment.targets} | {a.id for a in state.environment.airports}
    ids |= {s.id for s in state.environment.sams}
    for d in state.drones.values():
        ids |= {d.id, d.label, f"{d.label}_START"}
    return {i.upper() for i in ids}


_ID_IN_TEXT = re.compile(r"\b(?:T\d+|D\d+|SAM\d+)\b")


def tool_plan(question: str, state: MissionState) -> tuple[tuple[str, dict[str, Any]], ...]:
    """The rules engine's tool calls for ``question``: the overview, then the state of
    each drone it names (at most three)."""
    named = [d.label for d in state.drones.values() if re.search(rf"\b{d.label}\b", question)]
    return (
        ("mission_overview", {}),
        *(("drone_state", {"drone": label}) for label in named[:3]),
    )


def _check_ids(output: ResponderOutput, known: set[str]) -> str | None:
    named = set(output.ids) | set(_ID_IN_TEXT.findall(output.answer))
    unknown = sorted(i for i in named if i.upper() not in known)
    if unknown:
        return f"invalid: names unknown ids {', '.join(unknown)}"
    return None


async def respond(
    question: str,
    state: MissionState,
    *,
    engine: Engine,
    sink: TraceSink,
    memories: Callable[[], Iterable[MemoryLike]] = lambda: (),
    parent_run_id: str | None = None,
    timeout_s: float = 20.0,
    whatif: Any | None = None,
    extra_context: str = "",
    tools: ToolContext | None = None,
    max_tool_calls: int = DEFAULT_MAX_CALLS,
    on_stage: StageReport | None = None,
) -> Responded:
    """One responder call; never raises an engine failure (the rules answer stands).
    ``on_stage`` hears each tool call's start and end."""
    started = time.perf_counter()
    run_id = new_id()  # before the call: the tool calls' rows name it as their parent
    rules = responder_rules(question, state, whatif)
    memory_block = format_memories(memories())
    note = TOOLS_NOTE if tools is not None else ""
    system = "\n".join(p for p in (RESPONDER_PROMPT, note, HARD_CONSTRAINTS, memory_block) if p)
    parts = [state_context(state)]
    if whatif is not None:
        parts.append(whatif.context())
    elif isinstance(topic := topic_of(question, state), (Order, Allocation)):
        # the route geometry is not in the state's text: give the distances worked out
        parts.append("ROUTE GEOMETRY FOR THIS QUESTION (from the state): " + rules["answer"])
    elif isinstance(topic, Debug):  # nor the planning log
        parts.append("PLANNING LOG FOR THIS QUESTION (from the state): " + rules["answer"])
    if extra_context:
        parts.append(extra_context)
    parts.append(f"OPERATOR QUESTION: {question}")
    call = AgentCall(
        agent="responder",
        system=system,
        prompt="\n\n".join(parts),
        tool=RESPONDER_TOOL,
        deterministic=rules,
        tool_plan=tool_plan(question, state) if tools is not None else (),
    )
    session = None
    if tools is None:
        done = await call_validated(engine, call, ResponderOutput, timeout_s)
    else:
        session = ToolSession(
            "responder",
            tools,
            sink,
            parent_run_id=run_id,
            max_calls=max_tool_calls,
            on_stage=on_stage,
        )
        done = await call_with_tools(engine, call, session, ResponderOutput, timeout_s)
    reply, error, raw = done.reply, done.error, done.raw
    output: ResponderOutput | None = done.output
    if output is not None:
        error = _check_ids(output, _known_ids(state))
        if error is None:
            answered = [c.result["data"] for c in session.calls if c.ok] if session else []
            facts = supported(state, rules, whatif, question, answered)
            problems = number_problems(output, facts, state, hypothetical=whatif is not None)
            if problems:
                error = f"{NUMBERS_ERROR}: {'; '.join(problems)}"
        if error is not None:
            output = None
    applied = output is not None
    chosen = output if output is not None else ResponderOutput.model_validate(rules)
    validated: dict[str, Any] = {**chosen.model_dump(), "source": "engine" if applied else "rules"}
    if session is not None:
        validated["tool_calls"] = [c.run_id for c in session.calls]
    record = AgentRunRecord(
        run_id=run_id,
        parent_run_id=parent_run_id,
        mission_run_id=state.run_id,
        agent="responder",
        engine=getattr(engine, "name", "unknown"),
        model=(
            reply.model if reply is not None and reply.model else getattr(engine, "model", None)
        ),
        input_hash=call.input_hash,
        input_size=call.input_size,
        tokens_in=reply.tokens_in if reply is not None else None,
        tokens_out=reply.tokens_out if reply is not None else None,
        duration_ms=(time.perf_counter() - started) * 1000,
        raw_output=reply.raw if reply is not None else raw,
        validated_output=validated,
        clamp_actions=(),
        applied=applied,
        error=error,
        tick=state.tick,
    )
    sink.emit(record)
    return Responded(
        chosen, applied, error, record, [c.run_id for c in session.calls] if session else []
    )
