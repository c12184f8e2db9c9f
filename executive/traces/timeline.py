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

from executive.traces.analysis import tracks
from executive.traces.reader import TraceReader

__all__ = ["TRAIL_POINTS", "state_at"]

TRAIL_POINTS = 400  # per drone, at most, in a seek's flown trail
_ENDS = {"drone_lost": "lost", "drone_landed": "landed"}  # events that end a drone's flight


def state_at(reader: TraceReader, run: dict[str, Any], tick: int) -> dict[str, Any]:
    """The picture of ``run`` (its row) at the end of ``tick``, as the live scene has it."""
    run_id = run["run_id"]
    snap = reader.snapshot_at(run_id, tick)
    scene: dict[str, Any] = copy.deepcopy(snap["scene"]) if snap else _bare(run)
    since = snap["tick"] + 1 if snap else 0
    for event in reader.events_range(run_id, since, tick):
        _apply(scene, event)
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


def _apply(scene: dict[str, Any], event: dict[str, Any]) -> None:
    """One stored event, applied to the picture."""
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
    elif kind == "edit_applied":
        _apply_edit(targets, sams, p["edit"])
    elif kind == "COMMIT_PLAN":
        scene["plan_id"] = p.get("plan_id")
        if "points" in p:
            scene["planned_points"] = p["points"]
        for drone_id, route in (p.get("routes") or {}).items():
            scene.setdefault("drones", {}).setdefault(drone_id, {})["route"] = route
    elif kind in ("PAUSE", "REVIEW"):
        scene["mode"] = "PAUSED" if kind == "PAUSE" else "REVIEW"


def _apply_edit(
    targets: list[dict[str, Any]], sams: list[dict[str, Any]], edit: dict[str, Any]
) -> None:
    op = edit.get("op")
    if op == "add_target":
        targets.append(
            {k: edit[k] for k in ("id", "x", "y", "priority", "type") if k in edit}
            | {"status": "pending", "drone": None}
        )
    elif op == "remove_target":
        targets[:] = [t for t in targets if t["id"] != edit["id"]]
    elif op in ("move_target", "set_priority"):
        for t in targets:
            if t["id"] == edit["id"]:
                t.update({k: edit[k] for k in ("x", "y", "priority") if k in edit})
    elif op == "add_sam":
        sams.append(
            {
                "id": edit["id"],
                "x": edit["pos"][0],
                "y": edit["pos"][1],
                "range": edit["range"],
                "known": not edit.get("hidden", False),
            }
        )
    elif op == "remove_sam":
        sams[:] = [s for s in sams if s["id"] != edit["id"]]
    elif op == "move_sam":
        for s in sams:
            if s["id"] == edit["id"]:
                s["x"], s["y"] = edit["pos"]
                if edit.get("range") is not None:
                    s["range"] = edit["range"]
    elif op == "reveal_sam":
        for s in sams:
            if s["id"] == edit["id"]:
                s["known"] = True
