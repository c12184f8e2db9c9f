"""The responder (seed 000 §4.5, Appendix A.6): answers the operator from the state, with
the numbers.

Like the planning round's roles: the system prompt (A.6 adapted to a mission in flight,
with the hard constraints and the memories injected), the tool whose input is the answer
(``answer``, the ``numbers`` it cites, the ``ids`` it names), a pydantic model
(``extra="forbid"``) that parses it, and a deterministic rules answer over a
``MissionState`` for the common questions -- fuel margins, points so far / planned, targets
not collected or unassigned, where a drone is and what it does, why a target is excluded or
not visited, the mission's status, the known SAMs -- and for a what-if's difference.

``respond(...)`` runs one responder call through an ``Engine`` (rules: the deterministic
answer; anthropic: tool use), raced against ``timeout_s``. The reply is validated (schema,
then every id it names must be known: an answer about a target that does not exist is not
passed on); on any failure the rules answer stands and the reason is in the traced
``AgentRunRecord`` (``error``, ``applied=False``).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from executive.agents.context import HARD_CONSTRAINTS, MemoryLike, format_memories
from executive.contracts import AgentRunRecord, TraceSink, new_id
from executive.engines.base import AgentCall, Engine, ToolSpec, call_validated
from executive.mission_state import MissionState
from planner.model import drone_label

__all__ = ["CitedNumber", "RESPONDER_PROMPT", "RESPONDER_TOOL", "Responded",
           "ResponderOutput", "respond", "responder_rules", "state_context"]

RESPONDER_PROMPT = """\
You are the ISR Mission Responder of a multi-drone ISR mission executive.

Your role:
- Answer the operator's question using ONLY the MISSION STATE below (and the WHAT-IF RESULT
  when one is given): the known environment, each drone's status, position, fuel left, fuel
  budget, remaining path and fuel margin, points, the committed plan.
- You never recompute routes. A what-if has already been planned on a copy; report its
  difference against the current plan, do not invent another.

When a mission plan exists:
- ALWAYS cite specific numbers from the state: fuel left and fuel budget per drone, the fuel
  margin (fuel left - remaining path), points collected per drone and in total, points still
  planned, counts of collected vs open targets, the open targets by id.
- Every number you state goes in `numbers` too (label, value, unit), and every target, drone
  or SAM id you name goes in `ids`. Name only ids that appear in the state.

When answering:
- Be precise, concise and numerical; prefer short statements over vague text.
- For a comparative or evaluative question, compare numeric values.
- If targets are not collected or not planned, name them and say why (excluded inside a
  known SAM, no drone can sense their type, not in the plan for fuel).
- Never use fluff ("likely", "maybe", "probably") when numbers exist.

When NO plan exists yet: say so clearly and suggest planning first.
Hidden threats are unknown to you: speak only of the known SAMs.

Answer by calling the tool with: answer (the text for the operator), numbers
[{"label", "value", "unit"}], ids (every id named in the answer).
"""


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CitedNumber(_Output):
    label: str = Field(min_length=1)
    value: float = Field(allow_inf_nan=False)
    unit: str = ""


class ResponderOutput(_Output):
    answer: str = Field(min_length=1)
    numbers: list[CitedNumber] = Field(default_factory=list)
    ids: list[str] = Field(default_factory=list)

    @field_validator("answer")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the answer is blank")
        return value


RESPONDER_TOOL = ToolSpec(
    name="answer",
    description="Give the operator the answer, citing the numbers it rests on.",
    input_schema={
        "type": "object",
        "properties": {
            "answer": {"type": "string", "description": "the answer, precise and numerical"},
            "numbers": {
                "type": "array",
                "description": "every number the answer states",
                "items": {
                    "type": "object",
                    "properties": {"label": {"type": "string"}, "value": {"type": "number"},
                                   "unit": {"type": "string"}},
                    "required": ["label", "value"],
                    "additionalProperties": False,
                },
            },
            "ids": {"type": "array", "items": {"type": "string"},
                    "description": "every target, drone and SAM id named in the answer"},
        },
        "required": ["answer", "numbers", "ids"],
        "additionalProperties": False,
    },
)

# ----------------------------------------------------------------------------- context


def _f(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def state_context(state: MissionState) -> str:
    """The mission state as the prompt's text: every number the answer may cite."""
    env = state.environment
    out = [f"MISSION STATE ({state.source} run {state.run_id}, tick {state.tick},"
           f" t = {state.time:.1f} s, mode {state.mode})"]
    out.append("AIRPORTS: " + ", ".join(f"{a.id} ({a.x:g}, {a.y:g})" for a in env.airports))
    out.append("SAMS (known): " + ("; ".join(f"{s.id} at ({s.x:g}, {s.y:g}) range {s.range:g}"
                                             for s in env.sams) or "none"))
    planned = state.planned_by
    out.append("TARGETS:")
    for t in env.targets:
        if t.id in state.collected:
            where = f"collected by {drone_label(state.collected[t.id])}"
        elif t.id in state.excluded:
            where = "EXCLUDED (inside a known SAM)"
        elif t.id in planned:
            where = f"planned for {drone_label(planned[t.id])}"
        else:
            where = "not planned"
        out.append(f"  {t.id} at ({t.x:g}, {t.y:g}) priority {t.priority:g} type {t.type}: {where}")
    out.append("DRONES:")
    for d in state.drones.values():
        sensors = "ALL" if d.sensors == "ALL" else ", ".join(d.sensors)
        line = (f"  {d.label}: {d.status}{f' ({d.lost_reason})' if d.lost_reason else ''} at"
                f" ({d.x:.1f}, {d.y:.1f}); fuel {d.fuel:.1f} of budget {d.budget:.1f};"
                f" remaining path {_f(d.remaining_km)}; margin {_f(d.margin_km)};"
                f" points {d.points:g}; sensors {sensors}")
        out.append(line)
        out.append(f"    route: {' -> '.join(d.route) or '(none)'}; still to collect:"
                   f" {', '.join(d.planned_targets) or 'none'};"
                   f" collected: {', '.join(d.collected) or 'none'}")
    out.append(f"TOTALS: points collected {state.collected_points:g}; still planned"
               f" {state.points_to_collect:g}; planned in total {state.planned_points:g};"
               f" targets collected {len(state.collected)} of {len(env.targets)};"
               f" open {len(state.open_targets)}; excluded {', '.join(state.excluded) or 'none'}")
    if state.plan is None:
        out.append("CURRENT SOLUTION: none (no mission plan exists yet)")
    if state.constraints:
        out.append(f"OPERATOR CONSTRAINTS: {state.constraints}")
    return "\n".join(out)


# ----------------------------------------------------------------------------- rules answers

_TARGET_ID = re.compile(r"\b(?:target\s*#?\s*)?(T\d+)\b", re.I)
_DRONE_ID = re.compile(r"\b(?:(?:drone|uav)\s*#?\s*d?(\d+)|d(\d+))\b", re.I)


class _Answer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.numbers: list[dict[str, Any]] = []
        self.ids: list[str] = []

    def num(self, label: str, value: float, unit: str = "") -> None:
        self.numbers.append({"label": label, "value": round(float(value), 3), "unit": unit})

    def name(self, *ids: str) -> None:
        self.ids += [i for i in ids if i not in self.ids]

    def done(self) -> dict:
        return ResponderOutput(answer=" ".join(self.lines), numbers=self.numbers,
                               ids=self.ids).model_dump()


def _drone_in(question: str, state: MissionState) -> list[str]:
    found = []
    for m in _DRONE_ID.finditer(question):
        d = state.drone(f"D{m.group(1) or m.group(2)}") or state.drone(m.group(1) or m.group(2))
        if d is not None and d.id not in found:
            found.append(d.id)
    return found


def _targets_in(question: str, state: MissionState) -> list[str]:
    known = {t.lower(): t for t in state.target_ids}
    out = []
    for m in _TARGET_ID.finditer(question):
        t = known.get(m.group(1).lower())
        if t is not None and t not in out:
            out.append(t)
    return out


def responder_rules(question: str, state: MissionState, whatif: Any | None = None) -> dict:
    """The deterministic answer to ``question`` over ``state`` (see the module docstring)."""
    a = _Answer()
    q = (question or "").lower()
    if whatif is not None:
        _whatif(a, whatif)
        return a.done()
    drones = _drone_in(question or "", state)
    targets = _targets_in(question or "", state)
    if state.plan is None and not state.collected:
        a.lines.append("No mission plan exists yet: plan the mission first (isr plan or isr run).")
    if re.search(r"\bmargin|\b(?:most|least|more|less|lowest|highest|enough)\b.*\bfuel\b|"
                 r"\bfuel\b.*\b(?:most|least|left|remaining|lowest|highest)\b", q) and not drones:
        _margins(a, state, least=bool(re.search(r"\b(?:least|less|lowest|smallest|worst)\b", q)))
    elif re.search(r"\bwhy\b|\bexcluded?\b|\bskipped\b", q) and targets:
        for t in targets:
            _why(a, state, t)
    elif drones:
        for d in drones:
            _drone(a, state, d)
    elif re.search(r"\bpoints?\b|\bscore\b", q):
        _points(a, state)
    elif re.search(r"\bsams?\b|\bthreats?\b|\bmissiles?\b|air\s+defen", q):
        _sams(a, state)
    elif re.search(r"not\s+(?:yet\s+)?(?:collected|visited|assigned|planned)|uncollected|"
                   r"unassigned|unvisited|unplanned|\bmissed\b|\bopen\b|\bleft\b|remaining\s+"
                   r"targets|\bwhich\s+targets\b|\bexcluded\b", q):
        _open(a, state, only_unassigned=bool(re.search(r"unassigned|not\s+assigned|unplanned|"
                                                       r"not\s+planned", q)))
    elif targets:
        for t in targets:
            _why(a, state, t)
    else:
        _status(a, state)
    return a.done()


def _margins(a: _Answer, state: MissionState, least: bool = False) -> None:
    known = [d for d in state.drones.values() if d.margin_km is not None]
    if not known:
        a.lines.append("No drone's fuel margin can be computed now (all are lost or holding).")
        return
    ranked = sorted(known, key=lambda d: (d.margin_km, d.id), reverse=not least)
    best = ranked[0]
    word = "least" if least else "most"
    a.lines.append(f"{best.label} has the {word} fuel margin: {best.label}: {best.margin_km:.1f} km"
                   f" margin (fuel {best.fuel:.1f}, remaining path {best.remaining_km:.1f}).")
    others = [f"{d.label}: {d.margin_km:.1f} km margin (fuel {d.fuel:.1f}, remaining path"
              f" {d.remaining_km:.1f})" for d in ranked[1:]]
    unknown = [f"{d.label}: {d.status}" for d in state.drones.values() if d.margin_km is None]
    if others or unknown:
        a.lines.append("Others: " + "; ".join(others + [f"{u}, margin unknown" for u in unknown]) + ".")
    for d in ranked:
        a.name(d.label)
        a.num(f"{d.label} fuel margin", d.margin_km, "km")
        a.num(f"{d.label} fuel left", d.fuel, "km")
        a.num(f"{d.label} remaining path", d.remaining_km, "km")


def _points(a: _Answer, state: MissionState) -> None:
    per = ", ".join(f"{d.label} {d.points:g}" for d in state.drones.values())
    to_collect = state.planned_by
    a.lines.append(f"Points so far: {state.collected_points:g} collected ({per}) from"
                   f" {len(state.collected)} targets.")
    a.lines.append(f"Planned: {state.planned_points:g} in total, {state.points_to_collect:g}"
                   f" still to collect from {len(to_collect)} targets"
                   + (f" ({', '.join(to_collect)})." if to_collect else "."))
    possible = sum(t.priority for t in state.environment.targets if t.id not in state.excluded)
    a.lines.append(f"Reachable at most: {possible:g} points (known targets outside known SAMs).")
    a.num("points collected", state.collected_points)
    a.num("points planned in total", state.planned_points)
    a.num("points still to collect", state.points_to_collect)
    a.num("points possible", possible)
    for d in state.drones.values():
        a.num(f"{d.label} points", d.points)
    a.name(*[d.label for d in state.drones.values()], *to_collect)


def _reason(state: MissionState, t: str) -> str:
    planned = state.planned_by
    if t in planned:
        return f"planned for {drone_label(planned[t])}"
    sam = state.sam_containing(t)
    if sam is not None:
        return f"excluded: inside {sam[0]} ({sam[1]:.1f} km from its centre, range {sam[2]:g})"
    if not state.sensors_for(t):
        target = state.environment.target(t)
        return f"no drone left can sense type {target.type}"
    forbidden = [d for d, ts in (state.constraints.get("forbidden") or {}).items() if t in ts]
    if forbidden and set(state.sensors_for(t)) <= {str(d) for d in forbidden}:
        return "forbidden by the operator for every drone that can sense it"
    return "not in the plan: no drone's fuel covered it on its route"


def _open(a: _Answer, state: MissionState, only_unassigned: bool = False) -> None:
    items = state.unassigned if only_unassigned else state.open_targets
    what = "unassigned (no drone's route collects them)" if only_unassigned else "not collected yet"
    if not items:
        a.lines.append(f"No target is {what}: {len(state.collected)} of"
                       f" {len(state.environment.targets)} collected.")
        a.num("targets collected", len(state.collected))
        return
    points = sum(state.priority(t) for t in items)
    a.lines.append(f"{len(items)} targets {what}, worth {points:g} points: "
                   + "; ".join(f"{t} (priority {state.priority(t):g}, {_reason(state, t)})"
                               for t in items) + ".")
    a.lines.append(f"{len(state.collected)} of {len(state.environment.targets)} targets collected.")
    a.num("targets " + ("unassigned" if only_unassigned else "not collected"), len(items))
    a.num("their points", points)
    a.num("targets collected", len(state.collected))
    for t in items:
        a.num(f"{t} priority", state.priority(t))
    a.name(*items)


def _why(a: _Answer, state: MissionState, t: str) -> None:
    a.name(t)
    target = state.environment.target(t)
    a.num(f"{t} priority", target.priority)
    if t in state.collected:
        d = drone_label(state.collected[t])
        a.lines.append(f"{t} (priority {target.priority:g}) is not excluded: {d} collected it.")
        a.name(d)
        return
    reason = _reason(state, t)
    sam = state.sam_containing(t)
    if sam is not None:
        a.name(sam[0])
        a.num(f"{t} distance to {sam[0]} centre", sam[1], "km")
        a.num(f"{sam[0]} range", sam[2], "km")
        a.lines.append(f"{t} (priority {target.priority:g}) is {reason}; no path may enter a"
                       f" SAM disk, so no drone can reach it.")
        return
    if reason.startswith("planned"):
        d = state.drones[state.planned_by[t]]
        a.lines.append(f"{t} (priority {target.priority:g}) is not excluded: it is {reason}"
                       f" (route {' -> '.join(d.route)}).")
        a.name(d.label)
        return
    able = [state.drones[d] for d in state.sensors_for(t)]
    detail = "; ".join(f"{d.label} margin {_f(d.margin_km)} km" for d in able)
    a.lines.append(f"{t} (priority {target.priority:g}, type {target.type}) is {reason}"
                   + (f"; drones that can sense it: {detail}." if able else "."))
    for d in able:
        a.name(d.label)
        if d.margin_km is not None:
            a.num(f"{d.label} fuel margin", d.margin_km, "km")


def _drone(a: _Answer, state: MissionState, drone_id: str) -> None:
    d = state.drones[drone_id]
    a.name(d.label)
    a.num(f"{d.label} x", d.x, "km")
    a.num(f"{d.label} y", d.y, "km")
    a.num(f"{d.label} fuel left", d.fuel, "km")
    a.num(f"{d.label} fuel budget", d.budget, "km")
    a.num(f"{d.label} points", d.points)
    if d.status == "lost":
        a.lines.append(f"{d.label} is lost ({d.lost_reason or 'unknown reason'}) at ({d.x:.1f},"
                       f" {d.y:.1f}); it collected {d.points:g} points"
                       f" ({', '.join(d.collected) or 'no target'}).")
        return
    heading = math.degrees(d.heading) % 360
    line = (f"{d.label} is {d.status} at ({d.x:.1f}, {d.y:.1f}), heading {heading:.0f} deg;"
            f" fuel {d.fuel:.1f} of {d.budget:.1f} km")
    if d.remaining_km is not None:
        line += f", remaining path {d.remaining_km:.1f} km (margin {d.margin_km:.1f} km)"
        a.num(f"{d.label} remaining path", d.remaining_km, "km")
        a.num(f"{d.label} fuel margin", d.margin_km, "km")
    line += f"; {d.points:g} points from {', '.join(d.collected) or 'no target yet'}."
    a.lines.append(line)
    if d.planned_targets:
        end = d.route[-1] if d.route else "?"
        pts = sum(state.priority(t) for t in d.planned_targets)
        a.lines.append(f"Next: {', '.join(d.planned_targets)} ({pts:g} points) then {end}.")
        a.num(f"{d.label} points still planned", pts)
        a.name(*d.planned_targets)
    elif d.status in ("flying", "holding"):
        a.lines.append(f"No target left on its route; it flies to {d.route[-1] if d.route else 'base'}.")
    a.name(*d.collected)


def _sams(a: _Answer, state: MissionState) -> None:
    sams = state.environment.sams
    if not sams:
        a.lines.append("No SAM is known.")
        a.num("SAMs known", 0)
        return
    a.lines.append(f"{len(sams)} SAMs known: " + "; ".join(
        f"{s.id} at ({s.x:g}, {s.y:g}) range {s.range:g} km" for s in sams) + ".")
    inside = {t: state.sam_containing(t)[0] for t in state.excluded}
    if inside:
        a.lines.append("Targets inside them (excluded): " + ", ".join(
            f"{t} ({s})" for t, s in inside.items()) + ".")
    a.num("SAMs known", len(sams))
    for s in sams:
        a.num(f"{s.id} range", s.range, "km")
    a.name(*[s.id for s in sams], *inside)


def _status(a: _Answer, state: MissionState) -> None:
    a.lines.append(f"Mission at tick {state.tick} ({state.time:.1f} s), {state.mode}.")
    parts = []
    for d in state.drones.values():
        extra = f", margin {d.margin_km:.1f} km" if d.margin_km is not None else ""
        parts.append(f"{d.label} {d.status} (fuel {d.fuel:.1f} of {d.budget:.1f}{extra},"
                     f" {d.points:g} points)")
        a.num(f"{d.label} fuel left", d.fuel, "km")
        a.name(d.label)
    a.lines.append("; ".join(parts) + ".")
    lost = [d.label for d in state.drones.values() if d.status == "lost"]
    a.lines.append(f"Points: {state.collected_points:g} collected, {state.planned_points:g}"
                   f" planned in total; {len(state.collected)} of"
                   f" {len(state.environment.targets)} targets collected;"
                   f" excluded: {', '.join(state.excluded) or 'none'};"
                   f" lost: {', '.join(lost) or 'none'}.")
    a.num("points collected", state.collected_points)
    a.num("points planned in total", state.planned_points)
    a.num("targets collected", len(state.collected))
    a.name(*state.excluded)


def _whatif(a: _Answer, result: Any) -> None:
    """The difference a what-if makes (``executive.whatif.WhatIfResult``)."""
    cur, new, ctl = result.current, result.changed, result.control
    change = "; ".join(result.description)
    delta = new.points - cur.points
    a.lines.append(f"What if {change}: {new.points:g} points still to collect instead of"
                   f" {cur.points:g} under the current plan ({delta:+g}); fuel {new.fuel:.1f}"
                   f" km instead of {cur.fuel:.1f} ({new.fuel - cur.fuel:+.1f}).")
    if abs(ctl.points - cur.points) > 1e-9:
        a.lines.append(f"Replanned now without the change: {ctl.points:g} points, so the change"
                       f" itself is worth {new.points - ctl.points:+g}.")
    per = []
    for drone_id, diff in result.diff["drones"].items():
        label = drone_label(drone_id)
        bits = []
        if diff["added"]:
            bits.append("+" + ", +".join(diff["added"]))
        if diff["removed"]:
            bits.append("-" + ", -".join(diff["removed"]))
        if diff.get("not_planned"):
            bits.append("not planned")
        fuel = f"fuel {diff['fuel_before']:.1f} -> {diff['fuel_after']:.1f} km"
        per.append(f"{label}: {' '.join(bits) or 'same targets'}, {fuel}")
        a.name(label, *diff["added"], *diff["removed"])
        a.num(f"{label} fuel after", diff["fuel_after"], "km")
    if per:
        a.lines.append("Per drone: " + "; ".join(per) + ".")
    lost = result.diff.get("dropped") or []
    if lost:
        a.lines.append(f"Not collected any more: {', '.join(lost)}.")
        a.name(*lost)
    gained = result.diff.get("gained") or []
    if gained:
        a.lines.append(f"Collected in addition: {', '.join(gained)}.")
        a.name(*gained)
    if result.notes:
        a.lines.append("Notes: " + "; ".join(result.notes) + ".")
    a.lines.append("The live plan is unchanged.")
    a.num("points still to collect (what-if)", new.points)
    a.num("points still to collect (current plan)", cur.points)
    a.num("points difference", delta)
    a.num("points replanned without the change", ctl.points)
    a.num("fuel (what-if)", new.fuel, "km")
    a.num("fuel (current plan)", cur.fuel, "km")


# ----------------------------------------------------------------------------- the call


@dataclass
class Responded:
    output: ResponderOutput  # the engine's valid answer, or the rules answer
    applied: bool  # True when the engine's answer is the one given
    error: str | None  # why the engine's answer was not used ("kind: message")
    record: AgentRunRecord


def _known_ids(state: MissionState) -> set[str]:
    ids = {t.id for t in state.environment.targets} | {a.id for a in state.environment.airports}
    ids |= {s.id for s in state.environment.sams}
    for d in state.drones.values():
        ids |= {d.id, d.label, f"{d.label}_START"}
    return {i.upper() for i in ids}


_ID_IN_TEXT = re.compile(r"\b(?:T\d+|D\d+|SAM\d+)\b")


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
) -> Responded:
    """One responder call; never raises an engine failure (the rules answer stands)."""
    started = time.perf_counter()
    rules = responder_rules(question, state, whatif)
    memory_block = format_memories(memories())
    system = "\n".join(p for p in (RESPONDER_PROMPT, HARD_CONSTRAINTS, memory_block) if p)
    parts = [state_context(state)]
    if whatif is not None:
        parts.append(whatif.context())
    if extra_context:
        parts.append(extra_context)
    parts.append(f"OPERATOR QUESTION: {question}")
    call = AgentCall(agent="responder", system=system, prompt="\n\n".join(parts),
                     tool=RESPONDER_TOOL, deterministic=rules)
    done = await call_validated(engine, call, ResponderOutput, timeout_s)
    reply, output, error, raw = done.reply, done.output, done.error, done.raw
    if output is not None:
        error = _check_ids(output, _known_ids(state))
        if error is not None:
            output = None
    applied = output is not None
    chosen = output if applied else ResponderOutput.model_validate(rules)
    record = AgentRunRecord(
        run_id=new_id(), parent_run_id=parent_run_id, mission_run_id=state.run_id,
        agent="responder", engine=getattr(engine, "name", "unknown"),
        model=(reply.model if reply is not None and reply.model else getattr(engine, "model", None)),
        input_hash=call.input_hash, input_size=call.input_size,
        tokens_in=reply.tokens_in if reply is not None else None,
        tokens_out=reply.tokens_out if reply is not None else None,
        duration_ms=(time.perf_counter() - started) * 1000,
        raw_output=reply.raw if reply is not None else raw,
        validated_output={**chosen.model_dump(), "source": "engine" if applied else "rules"},
        clamp_actions=(), applied=applied, error=error,
        tick=state.tick)
    sink.emit(record)
    return Responded(chosen, applied, error, record)
