"""A starting point for a new mission file, explained in place (``isr scenario new``).

JSON has no comments, so the notes are ``"$comment"`` fields, which the loader and the
published schema accept in any object (``planner.scenario.forms``). The layout is plain and
always valid: two bases on the south edge of a 100 km square, the targets on a ring round
its middle, the SAMs inside the ring (they cover no base and no target), and fuel enough for
every drone to reach its targets and come home. A pop-up target on the timeline shows how a
mission changes while it flies.
"""

from __future__ import annotations

import math
from typing import Any, Final

from planner.limits import SWARM_DRONES, SWARM_SAMS, SWARM_TARGETS
from planner.scenario.forms import COMMENT_KEY, SCHEMA_KEY

__all__ = ["MAX_NEW_DRONES", "MAX_NEW_SAMS", "MAX_NEW_TARGETS", "starter_scenario"]

# The swarm the limits are sized for, all at once: every count up to these loads at the door.
MAX_NEW_DRONES: Final = SWARM_DRONES
MAX_NEW_TARGETS: Final = SWARM_TARGETS
MAX_NEW_SAMS: Final = SWARM_SAMS

_CENTRE = (50.0, 55.0)  # km: the middle of the ring
_RING_KM = 30.0  # targets' distance from the centre
_SAM_RING_KM = 10.0  # SAM centres' distance from the centre (one SAM: at the centre)
_SAM_RANGE_KM = 6.0  # with the ring above, no SAM reaches a target or a base
_FUEL_KM = 200.0  # a base to the far side of the ring and back is 170 km; all of it, more
_TYPES = ("EO", "IR")  # sensor types, alternating round the ring


def starter_scenario(
    drones: int = 2, targets: int = 8, sams: int = 1, schema: str | None = None
) -> dict[str, Any]:
    """A valid scenario with ``drones`` drones, ``targets`` targets and ``sams`` SAMs, each
    part explained by a ``$comment``; ``schema`` is the ``$schema`` link (None: no link)."""
    if not (1 <= drones <= MAX_NEW_DRONES and 0 <= targets <= MAX_NEW_TARGETS):
        raise ValueError("drones or targets out of range")
    if not 0 <= sams <= MAX_NEW_SAMS:
        raise ValueError("sams out of range")
    head: dict[str, Any] = {} if schema is None else {SCHEMA_KEY: schema}
    return {
        **head,
        COMMENT_KEY: (
            "A mission for the isr tools. Positions in km (x east, y north). Check it with"
            " 'isr validate FILE', plan it with 'isr plan FILE', fly it with 'isr run FILE'."
            " '$comment' fields are notes: they may go in any object and are ignored."
        ),
        "environment": {
            COMMENT_KEY: (
                "airports: where drones take off and land. targets: what to observe, worth"
                " 'priority' points to a drone whose sensors cover its 'type'; the position is"
                " x, y (or pos: [x, y]). sams: no-fly disks of 'range' km round 'pos' (or x, y);"
                " a target inside one cannot be visited."
            ),
            "airports": [
                {"id": "A1", "x": 10.0, "y": 10.0, "label": "Base Alpha"},
                {"id": "A2", "x": 90.0, "y": 10.0, "label": "Base Bravo"},
            ],
            "targets": [_target(i, targets) for i in range(targets)],
            "sams": [_sam(i, sams) for i in range(sams)],
        },
        "drone_configs": {str(k + 1): _drone(k) for k in range(drones)},
        "sim": {
            COMMENT_KEY: (
                "How the simulation flies it: speed in km/s (0.1 = 360 km/h), tick_hz ticks"
                " per simulated second, seed for anything random."
            ),
            "tick_hz": 20.0,
            "speed": 0.1,
            "seed": 0,
        },
        "timeline": [
            {
                COMMENT_KEY: (
                    "Changes while the mission flies, at t seconds: add_target, remove_target,"
                    " move_target, set_priority, add_sam (hidden: true until detected),"
                    " remove_sam, move_sam, reveal_sam, disable_drone, set_fuel."
                ),
                "t": 120.0,
                "op": "add_target",
                "id": "T_POPUP",
                "x": _CENTRE[0],
                "y": _CENTRE[1] + _RING_KM + 5.0,
                "priority": 8.0,
                "type": _TYPES[0],
            }
        ],
    }


def _on_ring(i: int, n: int, radius: float) -> tuple[float, float]:
    angle = 2 * math.pi * i / max(n, 1) + math.pi / 2
    x = _CENTRE[0] + radius * math.cos(angle)
    y = _CENTRE[1] + radius * math.sin(angle)
    return round(x, 1), round(y, 1)


def _target(i: int, n: int) -> dict[str, Any]:
    x, y = _on_ring(i, n, _RING_KM)
    return {"id": f"T{i + 1}", "x": x, "y": y, "priority": float(5 + i % 6), "type": _TYPES[i % 2]}


def _sam(i: int, n: int) -> dict[str, Any]:
    pos = _on_ring(i, n, _SAM_RING_KM) if n > 1 else _CENTRE
    return {"id": f"SAM{i + 1}", "pos": list(pos), "range": _SAM_RANGE_KM}


def _drone(k: int) -> dict[str, Any]:
    home = ("A1", "A2")[k % 2]
    drone: dict[str, Any] = {
        "fuelBudget": _FUEL_KM,
        "home_airport": home,
        "accessibleTargets": "ALL" if k % 2 == 0 else list(_TYPES),
    }
    if k == 0:
        drone = {
            COMMENT_KEY: (
                "fuelBudget: km of flight. It takes off from home_airport (or start_airport) and"
                " comes back (end_mode 'return'), or ends at end_airport ('end'), or at the best"
                " of allowed_ends ('best_end'). accessibleTargets: the target types its sensors"
                " cover, or 'ALL'."
            ),
            **drone,
        }
    return drone
