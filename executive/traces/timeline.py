"""A stored run at any tick: the picture a view needs, for seeking a replay.

How: the run keeps a scene snapshot every 30 s of mission time and soon after anything
happens (``Policy.snapshot_every`` / ``snapshot_gap``). The picture at tick T is the last
snapshot at or before T, with the events between it and T applied (targets collected,
SAMs detected or edited, targets edited, drones lost, plans committed), the drones where
the telemetry at or before T puts them, and their flown trails from the telemetry up to T
(thinned to a few hundred points). So a seek reads one snapshot, a few events and a few
telemetry rows, whatever the run's length: no re-execution. (``isr replay`` re-executes
the whole run to prove it exact; a fork re-executes up to its tick.)
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import ValidationError

from executive.traces.analysis import tracks
from executive.traces.reader import TraceReader
from planner.changes import apply_edit
from planner.edits import parse_edit
from planner.model import Sam, Target

__all__ = ["TRAIL_POINTS", "apply_event", "state_at"]

TRAIL_POINTS = 400  # per drone, at most, in a seek's flown trail
_ENDS = {"drone_lost": "lost", "drone_landed": "landed"}  # events that end a drone's flight
_TARGET_KEYS = ("id", "x", "y", "priority", "type")  # a target's own fields in the scene


def state_at(reader: TraceReader, run: dict[str, Any], tick: int) -> dict[str, Any]:
    """The picture of ``run`` (its row) at the end of ``tick``, as the live scene has it."""
    run_id = run["run_id"]
    snap = reader.snapshot_at(run_id, tick)
    scene: dict[str, Any] = copy.deepcopy(snap["scene"]) if snap else _bare(run)
    since = snap["tick"] + 1 if snap else 0
    for event in reader.events_range(run_id, since, tick):
        apply_event(scene, event)
    telemetry = reader.telemetry_at(run_id, tick)
    hz = float(scene.get("tick_hz") or run["scenario"].get("sim", {}).get("tick_hz", 20.0))
    scene["tick"] = tick
    scene["time"] = (tick + 1) / hz
    scene["run_id"] = run_id
    scene["replay"] = {
        "snapshot_tick": snap["tick"] if snap else None,
        "telemetry_tick": telemetry["tick"] if telemetry else None,
    }
    drones = scene.setdefault("drones", {})
    if telemetry is not None:
        for drone_id, t in telemetry["drones"].items():
            d = drones.setdefault(drone_id, {})
            d.update({k: t[k] for k in ("x", "y", "heading", "fuel", "status", "points") if k in t})
            if d.get("status") in ("lost", "landed", "parked"):
                d["planned"], d["frozen"] = [], []
        # The row is up to telemetry_every - 1 ticks old: a loss or landing since it wins
        # (a drone lost at T is lost at T, not still "flying" as the row before had it).
        for event in reader.events_range(run_id, telemetry["tick"] + 1, tick):
            after = _ENDS.get(event["kind"])
            if after is not None and event["payload"].get("drone") in drones:
                d = drones[event["payload"]["drone"]]
                d.update(status=after, planned=[], frozen=[])
    trails = tracks(reader, run, tick, points=TRAIL_POINTS)
    for drone_id, here in drones.items():
        trail = trails.get(drone_id, [])
        if trail and "x" in here:
            trail.append([round(here["x"], 4), round(here["y"], 4)])
        here["flown"] = trail
    scene["collected_points"] = float(
        sum(
            t.get("priority", 0) for t in scene.get("targets", []) if t.get("status") == "collected"
        )
    )
    return scene


def _bare(run: dict[str, Any]) -> dict[str, Any]:
    """The picture before the first snapshot: the scenario as loaded."""
    env = run["scenario"].get("environment", {})
    hidden = {e.get("id") for e in run["scenario"].get("timeline", []) if e.get("hidden")}
    return {
        "airports": [{"id": a["id"], "x": a["x"], "y": a["y"]} for a in env.get("airports", [])],
        "targets": [{**t, "status": "pending", "drone": None} for t in env.get("targets", [])],
        "sams": [
            {
                "id": s["id"],
                "x": s["pos"][0],
                "y": s["pos"][1],
                "range": s["range"],
                "known": s["id"] not in hidden,
            }
            for s in env.get("sams", [])
        ],
        "drones": {d: {"route": []} for d in run["scenario"].get("drone_configs", {})},
        "tick_hz": run["scenario"].get("sim", {}).get("tick_hz", 20.0),
        "draft": None,
        "plan_id": None,
        "mode": "FLYING",
    }


def apply_event(scene: dict[str, Any], event: dict[str, Any]) -> None:
    """One stored event (``kind``, ``payload``), applied to the picture ``scene``. An edit
    is applied whether it was observable or truth-only (a hidden SAM's): the picture, like
    the live scene, holds hidden SAMs too, marked not ``known``."""
    kind, p = event["kind"], event["payload"]
    targets = scene.setdefault("targets", [])
    sams = scene.setdefault("sams", [])
    if kind == "target_collected":
        for t in targets:
            if t["id"] == p["target"]:
                t["status"], t["drone"] = "collected", p["drone"]
    elif kind == "sam_detected":
        for s in sams:
            if s["id"] == p["sam"]:
                s["known"] = True
    elif kind == "drone_lost":
        drone = scene.setdefault("drones", {}).setdefault(p["drone"], {})
        drone.update(status="lost", planned=[], frozen=[])
    elif kind in ("edit_applied", "truth:edit_applied"):
        _apply_edit(scene, p["edit"])
    elif kind == "COMMIT_PLAN":
        scene["plan_id"] = p.get("plan_id")
        if "points" in p:
            scene["planned_points"] = p["points"]
        for drone_id, route in (p.get("routes") or {}).items():
            scene.setdefault("drones", {}).setdefault(drone_id, {})["route"] = route
    elif kind in ("PAUSE", "REVIEW"):
        scene["mode"] = "PAUSED" if kind == "PAUSE" else "REVIEW"


def _apply_edit(scene: dict[str, Any], data: Any) -> None:
    """A stored edit (its JSON), applied to the picture by ``planner.changes.apply_edit``;
    one that no longer parses (a trace of an older version) is left out."""
    try:
        edit = parse_edit(data)
    except ValidationError:
        return
    apply_edit(_ScenePicture(scene), edit)


class _ScenePicture:
    """A seek's picture (the live scene's JSON) as a ``planner.changes.Picture``: its
    targets (with their status) and SAMs (with ``known``). A drone's state comes from its
    events and the telemetry, so the fleet's steps change nothing here."""

    def __init__(self, scene: dict[str, Any]) -> None:
        self.targets: list[dict[str, Any]] = scene.setdefault("targets", [])
        self.sams: list[dict[str, Any]] = scene.setdefault("sams", [])

    def target(self, target_id: str) -> Target | None:
        t = next((t for t in self.targets if t["id"] == target_id), None)
        return None if t is None else Target.model_validate({k: t[k] for k in _TARGET_KEYS})

    def put_target(self, target: Target) -> None:
        fields = target.model_dump(include=set(_TARGET_KEYS))
        found = [t for t in self.targets if t["id"] == target.id]
        for t in found:  # moved or re-prioritised: its status and drone stay
            t.update(fields)
        if not found:
            self.targets.append(fields | {"status": "pending", "drone": None})

    def drop_target(self, target_id: str) -> None:
        self.targets[:] = [t for t in self.targets if t["id"] != target_id]

    def sam(self, sam_id: str) -> tuple[Sam, bool] | None:
        s = next((s for s in self.sams if s["id"] == sam_id), None)
        if s is None:
            return None
        return Sam(id=s["id"], pos=(s["x"], s["y"]), range=s["range"]), bool(s.get("known", True))

    def put_sam(self, sam: Sam, *, known: bool) -> None:
        fields = {"id": sam.id, "x": sam.x, "y": sam.y, "range": sam.range, "known": known}
        found = [s for s in self.sams if s["id"] == sam.id]
        for s in found:
            s.update(fields)
        if not found:
            self.sams.append(fields)

    def drop_sam(self, sam_id: str) -> None:
        self.sams[:] = [s for s in self.sams if s["id"] != sam_id]

    def disable_drone(self, drone_id: str) -> None:
        pass  # its drone_lost event marks it

    def set_fuel(self, drone_id: str, fuel: float) -> None:
        pass  # the telemetry carries the fuel
