"""What a stored run says over time: its plan history, its charts, its markers, and how two
runs compare. Pure reads of a ``TraceReader``; the dashboard's replay view, ``isr compare``
and ``isr report`` all draw from here.

``plan_history``: every plan version in tick order with its status, trigger and latency, and
what changed against the plan in force before it (drones whose route changed, points and
planned fuel deltas). ``series``: points collected and planned, fuel per drone, replan
latency per round, thinned to about ``points`` samples. ``markers``: the events worth a mark
on a playback bar, each with its category. ``compare``: two runs side by side and the first
tick where their recorded state hashes differ.
"""

from __future__ import annotations

import math
from typing import Any, assert_never

from executive.traces.codec import recorded_edit
from executive.traces.reader import TraceReader
from planner.edits import (
    AddSam,
    AddTarget,
    DisableDrone,
    MoveSam,
    MoveTarget,
    RemoveSam,
    RemoveTarget,
    RevealSam,
    SetFuel,
    SetPriority,
)

__all__ = [
    "MARKER_KINDS",
    "compare",
    "first_divergence",
    "markers",
    "plan_history",
    "series",
    "tracks",
]

# event kind -> the category its mark on the playback bar has
MARKER_KINDS: dict[str, str] = {
    "edit_applied": "edit",
    "edit_rejected": "edit",
    "sam_detected": "detection",
    "drone_lost": "loss",
    "REPLAN_REMAINDER": "replan",
    "REPLAN_FAILED": "replan",
    "REBASE": "replan",
    "REBASE_FAILED": "replan",
    "COMMIT_PLAN": "commit",
    "REVIEW": "review",
    "REVIEW_TIMEOUT": "review",
    "ACCEPT": "review",
    "REJECT": "review",
    "PLAN_REJECTED": "review",
    "PLAN_INFEASIBLE": "safety",  # the plan in force no longer fits a drone's fuel
    "PLAN_UNSAFE": "safety",  # the plan in force meets a known SAM ahead
    "SAFETY_HOLD": "safety",
    "SAFETY_DIVERT": "safety",
    "SAFETY_RETURN": "safety",
    "SAFETY_FALLBACK": "safety",
    "NO_SAFE_OPTION": "safety",
    "RETURN_TO_BASE": "safety",
    "PAUSE": "operator",
    "RESUME": "operator",
    "RESET": "operator",
    "REPLAN": "operator",
    "TRACE_DROPPED": "fault",
}


def _category(kind: str) -> str | None:
    if kind in MARKER_KINDS:
        return MARKER_KINDS[kind]
    return "safety" if kind.startswith("SAFETY") else None


def markers(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events worth a mark on the playback bar: tick, kind, category and a short label."""
    out = []
    for row in events:
        category = _category(row["kind"])
        if category is None:
            continue
        out.append(
            {
                "tick": row["tick"],
                "kind": row["kind"],
                "category": category,
                "label": _label(row["kind"], row.get("payload") or {}),
            }
        )
    return out


def _label(kind: str, p: dict[str, Any]) -> str:
    """A few words on an event, for a marker's tooltip."""
    for key in ("trigger", "sam", "drone", "reason"):
        if p.get(key):
            return f"{kind} {p[key]}"
    edit = p.get("edit")
    if isinstance(edit, dict):
        return f"{kind} {edit.get('op', '')} {edit.get('id') or edit.get('drone') or ''}".strip()
    return kind


def _targets(solution: dict[str, Any]) -> dict[str, list[str]]:
    return {d: list(r.get("visited_targets") or []) for d, r in solution["routes"].items()}


def _fuel(solution: dict[str, Any]) -> float:
    return float(sum(r.get("fuel_used") or 0.0 for r in solution["routes"].values()))


def plan_history(reader: TraceReader, run_id: str) -> list[dict[str, Any]]:
    """Every plan version, in tick order, with its difference from the plan in force when
    it was made: ``changed`` (drones whose targets differ), ``points_delta`` and
    ``fuel_delta`` (planned km), ``paths`` (each drone's planned path, for the map)."""
    out = []
    in_force: dict[str, Any] | None = None
    for pv in reader.plan_versions(run_id):
        solution = pv["solution"] or {"routes": {}, "total_points": 0.0}
        targets = _targets(solution)
        points = float(solution.get("total_points") or 0.0)
        fuel = _fuel(solution)
        if in_force is None:
            changed = sorted(targets)
            points_delta, fuel_delta = points, fuel
        else:
            before = _targets(in_force)
            changed = sorted(
                d for d in set(targets) | set(before) if targets.get(d) != before.get(d)
            )
            points_delta = points - float(in_force.get("total_points") or 0.0)
            fuel_delta = fuel - _fuel(in_force)
        out.append(
            {
                "plan_id": pv["plan_id"],
                "tick": pv["tick"],
                "status": pv["status"],
                "trigger": pv["trigger"],
                "latency_ms": pv["latency_ms"],
                "provenance": pv.get("provenance") or {},
                "points": points,
                "fuel": round(fuel, 3),
                "targets": targets,
                "changed": changed,
                "points_delta": points_delta,
                "fuel_delta": round(fuel_delta, 3),
                "paths": {d: r.get("path") or [] for d, r in solution["routes"].items()},
            }
        )
        if pv["status"] in ("committed", "superseded"):  # flown (superseded: flown, then replaced)
            in_force = solution
    return out


def _stride(first: int, last: int, stored: int, points: int) -> int:
    """Ticks between samples: a multiple of the stored interval giving about ``points``."""
    wanted = max(1, math.ceil((last - first + 1) / max(points, 1)))
    return stored * max(1, math.ceil(wanted / stored))


def series(reader: TraceReader, run: dict[str, Any], *, points: int = 600) -> dict[str, Any]:
    """The run's charts: ``ticks``; ``collected`` and ``planned`` points (planned: collected
    plus what the plan in force still means to collect); ``fuel`` per drone; ``reserve``
    (the policy's km kept above the way home); ``rounds`` (tick, latency, status, trigger
    per plan version). Sampled every few stored telemetry rows."""
    run_id = run["run_id"]
    config = run.get("config") or {}
    policy = config.get("policy") or {}
    stored = int(policy.get("telemetry_every") or 5)
    last = reader.telemetry_at(run_id, 2**62)
    last_tick = last["tick"] if last else 0
    every = _stride(0, last_tick, stored, points)
    rows = reader.telemetry_range(run_id, 0, last_tick, every=every)
    if rows and rows[-1]["tick"] != last_tick and last is not None:
        rows.append(last)
    priority = {t["id"]: float(t["priority"]) for t in _all_targets(reader, run)}
    plans = {pv["plan_id"]: pv for pv in reader.plan_versions(run_id)}
    commits = [
        (e["tick"], e["payload"].get("plan_id"))
        for e in reader.events(run_id)
        if e["kind"] == "COMMIT_PLAN"
    ]
    collected_ids: list[tuple[int, str]] = [
        (e["tick"], e["payload"]["target"])
        for e in reader.events(run_id)
        if e["kind"] == "target_collected"
    ]
    ticks, collected, planned = [], [], []
    fuel: dict[str, list[float | None]] = {}
    c = p = 0
    intent: set[str] = set()
    done: set[str] = set()
    for i, row in enumerate(rows):
        tick = row["tick"]
        while c < len(commits) and commits[c][0] <= tick:
            pv = plans.get(commits[c][1] or "")
            if pv is not None:
                intent = {t for ts in _targets(pv["solution"]).values() for t in ts}
            c += 1
        while p < len(collected_ids) and collected_ids[p][0] <= tick:
            done.add(collected_ids[p][1])
            p += 1
        drones = row["drones"]
        got = float(sum(d.get("points") or 0.0 for d in drones.values()))
        ticks.append(tick)
        collected.append(got)
        planned.append(got + sum(priority.get(t, 0.0) for t in intent - done))
        for drone_id, d in drones.items():
            fuel.setdefault(drone_id, [None] * i).append(round(float(d.get("fuel") or 0.0), 3))
    rounds = [
        {
            "tick": pv["tick"],
            "latency_ms": pv["latency_ms"],
            "status": pv["status"],
            "trigger": pv["trigger"],
        }
        for pv in plans.values()
    ]
    return {
        "ticks": ticks,
        "tick_hz": float((run.get("scenario") or {}).get("sim", {}).get("tick_hz", 20.0)),
        "collected": collected,
        "planned": planned,
        "fuel": fuel,
        "reserve": float(policy.get("fuel_reserve", 1.0)),
        "rounds": rounds,
    }


def _all_targets(reader: TraceReader, run: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target the run ever had: the scenario's and those added by edits."""
    scenario = run.get("scenario") or {}
    targets = list((scenario.get("environment") or {}).get("targets") or [])
    for e in reader.events(run["run_id"]):
        if e["kind"] != "edit_applied":
            continue
        data = (e.get("payload") or {}).get("edit")
        match recorded_edit(data):
            case AddTarget():
                targets.append(data)
            case SetPriority() as edit:
                targets.append({"id": edit.id, "priority": edit.priority})
            case (
                None
                | RemoveTarget()
                | MoveTarget()
                | AddSam()
                | RemoveSam()
                | MoveSam()
                | RevealSam()
                | DisableDrone()
                | SetFuel()
            ):
                pass  # no new target, no new points
            case edit:  # pragma: no cover - the union is closed
                assert_never(edit)
    seen: dict[str, dict[str, Any]] = {}
    for t in targets:  # the last priority a target had is the one it was collected at
        seen[t["id"]] = {**seen.get(t["id"], {}), **t}
    return list(seen.values())


def tracks(
    reader: TraceReader, run: dict[str, Any], end: int, *, points: int = 400
) -> dict[str, list[list[float]]]:
    """Each drone's flown track up to tick ``end``, about ``points`` points, from the stored
    telemetry (while flying or holding)."""
    stored = int(((run.get("config") or {}).get("policy") or {}).get("telemetry_every") or 5)
    every = _stride(0, end, stored, points)
    out: dict[str, list[list[float]]] = {}
    for row in reader.telemetry_range(run["run_id"], 0, end, every=every):
        for drone_id, t in row["drones"].items():
            if t.get("status") in ("flying", "holding") or out.get(drone_id):
                out.setdefault(drone_id, []).append([round(t["x"], 4), round(t["y"], 4)])
    return out


def first_divergence(a: dict[int, str], b: dict[int, str]) -> int | None:
    """The first tick both runs hashed where their states differ (None: never, on the ticks
    both recorded)."""
    for tick in sorted(set(a) & set(b)):
        if a[tick] != b[tick]:
            return tick
    return None


def compare(reader: TraceReader, a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Two runs side by side: outcome (points, drones lost, fuel used, replans) and the
    first tick where their recorded states diverge."""
    sides = []
    for run in (a, b):
        outcome = run.get("outcome") or {}
        last = reader.telemetry_at(run["run_id"], 2**62) or {"tick": None, "drones": {}}
        used = sum(
            float(d.get("distance_flown") or 0.0) for d in (outcome.get("drones") or {}).values()
        ) or _fuel_used(run, last)
        sides.append(
            {
                "run_id": run["run_id"],
                "status": run["status"],
                "parent_run_id": run.get("parent_run_id"),
                "points": outcome.get("total_points", _points(last)),
                "lost": sorted(outcome.get("lost") or _lost(last)),
                "fuel_used": round(used, 3),
                "replans": len(outcome.get("replans") or []),
                "ticks": outcome.get("ticks") or last["tick"],
            }
        )
    diverged = first_divergence(reader.state_hashes(a["run_id"]), reader.state_hashes(b["run_id"]))
    return {"a": sides[0], "b": sides[1], "first_divergence": diverged}


def _fuel_used(run: dict[str, Any], last: dict[str, Any]) -> float:
    """Fuel used by a run without an outcome (running, crashed): budgets less fuel left."""
    configs = (run.get("scenario") or {}).get("drone_configs") or {}
    budgets = {d: float(c.get("fuelBudget") or 0.0) for d, c in configs.items()}
    return sum(
        max(0.0, budgets.get(d, 0.0) - float(t.get("fuel") or 0.0))
        for d, t in last["drones"].items()
    )


def _points(last: dict[str, Any]) -> float:
    return float(sum(d.get("points") or 0.0 for d in last["drones"].values()))


def _lost(last: dict[str, Any]) -> list[str]:
    return [d for d, t in last["drones"].items() if t.get("status") == "lost"]
