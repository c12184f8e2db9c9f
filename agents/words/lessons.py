"""Outcome memory (seed 003's learner): what each run taught, stored at its end, and the
most relevant recent lessons put in every agent prompt next to the memories.

A lesson is computed from the run's report, never written by a model: what changed (the
disruptions that asked for a replan, the drones lost), what the executive did (rounds
committed, failed, rejected; agent proposals applied; safety actions and returns) and how
it ended against the plan it started with (points, share). Its ``text`` is one line an
agent can read; its ``value`` keeps the figures for a person or a script.

Relevance: a lesson of the same mission (the same environment and drones, by
``mission_key``) ranks first, then one that shares disruption classes with what the
mission's timeline scripts (``disruption_classes``), then the newest. The lessons a run's
prompts receive are chosen once, at its start, and recorded in its configuration
(``RunConfig.lessons``): a replay gives its prompts the same lines, so the agents' inputs,
and the answers recorded for them, match.

Contract
--------
Options
    ``LessonStore(url)``: any SQLAlchemy URL the trace store accepts (table ``lessons``,
    created if missing).
Methods
    ``record(lesson) -> Lesson`` (one per run: recording a run again replaces its lesson);
    ``list(limit=None) -> list[Lesson]`` newest first; ``relevant(scenario, limit=3)``.
    Database failures raise ``ExecutiveError`` with one clear line. ``close()`` disposes of
    the connection pool. ``lesson_of(run_id, scenario, report)`` is the pure part.
"""

from __future__ import annotations

import builtins
import hashlib
import json
import statistics
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from planner.edits import EDIT_MODELS, EDIT_OPS, TRIGGERS, RevealSam
from planner.model import Scenario

if TYPE_CHECKING:
    from executive.loop.report import RunReport

# SQLAlchemy and the store's schema are imported where a store is opened or read: a run
# without a store (`isr run --db none`) never loads them (0.3 CPU s of its start).
__all__ = [
    "PROMPT_LESSONS",
    "Lesson",
    "LessonLine",
    "LessonStore",
    "disruption_classes",
    "lesson_of",
    "mission_key",
    "prompt_lines",
]

PROMPT_LESSONS = 3  # lessons in a prompt: a few lines, not a history

# A change (a replan trigger's or a timeline edit's first word) -> its disruption class: an
# edit's is its kind's trigger (planner.edits), a trigger's is itself; and the executive's
# own labels: a detection is a reveal_sam (SamDetected.as_edit), a drone sent home by fuel
# safety raises drone_lost.
_CLASS_OF: dict[str, str] = {
    **{trigger: trigger for trigger in TRIGGERS},
    **{op: model.change.trigger for op, model in zip(EDIT_OPS, EDIT_MODELS, strict=True)},
    "sam_detected": RevealSam.change.trigger,
    "safety_return": "drone_lost",
}


@dataclass(frozen=True)
class LessonLine:
    """A lesson as a prompt reads it (``agents.context.MemoryLike``)."""

    text: str
    category: str = "lesson"


@dataclass(frozen=True)
class Lesson:
    """One run's lesson: the line agents read and the figures behind it."""

    run_id: str
    mission: str  # mission_key of the run's scenario
    classes: tuple[str, ...]  # disruption classes met, sorted
    text: str  # one line, for prompts
    value: dict[str, Any] = field(default_factory=dict)  # the figures, JSON-safe
    created_at: float = 0.0  # Unix seconds
    id: int | None = None  # the row id, once stored

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: every field (``isr memory lessons --json``)."""
        return {
            "id": self.id,
            "run_id": self.run_id,
            "mission": self.mission,
            "classes": list(self.classes),
            "text": self.text,
            "value": self.value,
            "created_at": self.created_at,
        }


def mission_key(scenario: Scenario) -> str:
    """The same mission, whatever its timeline: a digest of its environment and drones."""
    core = scenario.model_dump(mode="json", include={"environment", "drone_configs"})
    canonical = json.dumps(core, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _class_of(change: str) -> str | None:
    return _CLASS_OF.get(change.split(":", 1)[0].strip())


def disruption_classes(scenario: Scenario) -> set[str]:
    """The disruption classes the scenario's timeline scripts (what a run of it will meet)."""
    return {c for edit in scenario.timeline if (c := _class_of(edit.op)) is not None}


def lesson_of(run_id: str, scenario: Scenario, report: RunReport) -> Lesson:
    """The lesson of a run that ended, from its report (pure: nothing is read or stored)."""
    changes = [
        part.strip()
        for replan in report.replans
        if replan.trigger != "initial"
        for part in replan.trigger.split(" + ")
    ]
    outcome = report.outcome
    lost = {d: outcome.drones[d].lost_reason for d in outcome.lost}
    classes = {c for change in changes if (c := _class_of(change)) is not None}
    if lost:
        classes.add("drone_lost")
    statuses = Counter(r.status for r in report.replans)
    latencies = [r.latency_ms for r in report.replans if r.latency_ms is not None]
    planned = report.initial_points
    points = outcome.total_points
    share = points / planned if planned > 0 else None
    value = {
        "changes": list(dict.fromkeys(changes)),
        "rounds": dict(sorted(statuses.items())),
        "agent_applied": sum(r.agent_applied for r in report.replans),
        "safety_actions": report.safety_actions,
        "safety_returns": list(report.safety_returns),
        "lost": lost,
        "points": round(points, 1),
        "planned_at_start": round(planned, 1),
        "share_of_plan": None if share is None else round(share, 3),
        "replan_ms_median": round(statistics.median(latencies)) if latencies else None,
        "uncollected": len(outcome.uncollected),
    }
    return Lesson(
        run_id,
        mission_key(scenario),
        tuple(sorted(classes)),
        _line(value),
        value,
        time.time(),
    )


def _line(v: dict[str, Any]) -> str:
    """The lesson in one line: what changed, what was done, how it ended, the takeaway."""
    changes = v["changes"]
    shown = ", ".join(changes[:4]) + (f" and {len(changes) - 4} more" if len(changes) > 4 else "")
    what = f"after {shown}" if changes else "with no change to replan for"
    rounds = v["rounds"]
    done = ", ".join(f"{n} {status}" for status, n in rounds.items()) or "no replan"
    parts = [f"Past run {what}: rounds {done}"]
    if v["agent_applied"]:
        parts.append(f"{v['agent_applied']} agent proposal(s) flown")
    if v["safety_actions"]:
        parts.append(f"{v['safety_actions']} safety action(s)")
    if v["lost"]:
        parts.append(
            "lost " + ", ".join(f"D{d} ({why or 'no reason'})" for d, why in v["lost"].items())
        )
    share = v["share_of_plan"]
    ended = f"{v['points']:g} points against {v['planned_at_start']:g} planned at start"
    if share is not None:
        ended += f" ({100 * share:.0f} %)"
    parts.append(ended)
    takeaway = _takeaway(share, rounds, bool(v["lost"]), bool(changes))
    if takeaway:
        parts.append(f"takeaway: {takeaway}")
    return "; ".join(parts) + "."


def _takeaway(share: float | None, rounds: dict[str, int], lost: bool, changed: bool) -> str:
    if share is None:
        return ""
    if share < 0.95:
        if rounds.get("failed") or rounds.get("rejected"):
            return "rounds that failed or were refused cost points; keep drafts simple"
        if lost:
            return "a lost drone's targets were not all recovered; favour spare fuel"
        return "the changes cost points the replans did not win back"
    if not changed:
        return ""
    if share > 1.005:
        return "replanning on these changes gained on the first plan"
    return "replanning on these changes kept the first plan's points"


class LessonStore:
    """The lessons in one database; see the module docstring for the contract."""

    def __init__(self, url: str) -> None:
        from executive.traces.engine import open_store

        self.url = url
        self._engine = open_store(url)

    def record(self, lesson: Lesson) -> Lesson:
        """Store ``lesson`` (replacing an earlier one of the same run) and return it with
        its id."""
        from sqlalchemy import delete

        from executive.traces import schema as S
        from executive.traces.engine import database_errors

        with (
            database_errors(f"cannot store the lesson in {self.url}"),
            self._engine.begin() as conn,
        ):
            conn.execute(delete(S.lessons).where(S.lessons.c.run_id == lesson.run_id))
            result = conn.execute(
                S.lessons.insert().values(
                    run_id=lesson.run_id,
                    mission=lesson.mission,
                    classes=list(lesson.classes),
                    text=lesson.text,
                    value=lesson.value,
                    created_at=lesson.created_at,
                )
            )
            key = result.inserted_primary_key
        return Lesson(**{**lesson.__dict__, "id": int(key[0]) if key else None})

    def list(self, limit: int | None = None) -> builtins.list[Lesson]:
        """The lessons, newest first (at most ``limit``)."""
        from sqlalchemy import select

        from executive.traces import schema as S

        query = select(S.lessons).order_by(S.lessons.c.created_at.desc(), S.lessons.c.id.desc())
        if limit is not None:
            query = query.limit(limit)
        return self._read(query)

    def relevant(self, scenario: Scenario, limit: int = PROMPT_LESSONS) -> builtins.list[Lesson]:
        """The ``limit`` lessons most relevant to ``scenario``: same mission first, then the
        most disruption classes shared with its timeline, then the newest."""
        key, classes = mission_key(scenario), disruption_classes(scenario)
        recent = self.list(limit=200)  # the newest few hundred: old lessons fade

        def rank(lesson: Lesson) -> tuple[bool, int, float]:
            return (lesson.mission == key, len(classes & set(lesson.classes)), lesson.created_at)

        return sorted(recent, key=rank, reverse=True)[:limit]

    def close(self) -> None:
        """Release the database connections."""
        self._engine.dispose()

    def _read(self, query) -> builtins.list[Lesson]:
        from executive.traces.engine import database_errors

        with (
            database_errors(f"cannot read lessons from {self.url}"),
            self._engine.connect() as conn,
        ):
            rows = conn.execute(query).all()
        return [
            Lesson(
                r.run_id,
                r.mission,
                tuple(r.classes or ()),
                r.text,
                dict(r.value or {}),
                float(r.created_at),
                int(r.id),
            )
            for r in rows
        ]


def prompt_lines(texts: Iterable[str]) -> tuple[LessonLine, ...]:
    """The lesson lines as prompts read them, next to the memories."""
    return tuple(LessonLine(text) for text in texts)
