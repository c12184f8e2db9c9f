"""The world as it truly is, advanced one fixed tick at a time.

``Sim`` (the driver: simpy time, stamped inputs, ``step()``), ``run_paced`` (real time x k
or as fast as possible) over a ``Pacer`` (when each tick is due, on an injected ``Clock``),
``World`` (truth and known environments, the fleet in arrays), the typed events, the
commands, ``FleetView.telemetry()`` (the per-drone telemetry frame) and ``mission_outcome``
(what a finished run achieved).
``sim`` imports ``planner``; never ``executive`` or ``dashboard``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sim.commands import Command, Disable, FlyPath, Hold, ResumeFlight, ReturnToBase
    from sim.driver import PaceReport, Sim, TickResult, run_paced
    from sim.errors import SimError
    from sim.events import (
        CommandApplied,
        CommandRejected,
        DroneHolding,
        DroneLanded,
        DroneLost,
        EditApplied,
        EditRejected,
        Event,
        SamDetected,
        TargetCollected,
        TargetMissed,
    )
    from sim.flight import Flight
    from sim.outcome import DroneOutcome, Outcome, mission_outcome
    from sim.pacing import MAX_SPEED, MIN_SPEED, Clock, Pacer, SleepingClock, WallClock
    from sim.snapshot import DroneState, DroneTelemetry, FleetView, Snapshot
    from sim.world import World

# Each name is imported from its module when first used: a reader of one module (the
# dashboard's edit door reads ``sim.edit_check``, the run's bus ``sim.pacing``) does not load
# the flight kernels and the planner's distance table with the whole package.
_HOMES = {
    "Command": "sim.commands",
    "Disable": "sim.commands",
    "FlyPath": "sim.commands",
    "Hold": "sim.commands",
    "ResumeFlight": "sim.commands",
    "ReturnToBase": "sim.commands",
    "PaceReport": "sim.driver",
    "Sim": "sim.driver",
    "TickResult": "sim.driver",
    "run_paced": "sim.driver",
    "SimError": "sim.errors",
    "CommandApplied": "sim.events",
    "CommandRejected": "sim.events",
    "DroneHolding": "sim.events",
    "DroneLanded": "sim.events",
    "DroneLost": "sim.events",
    "EditApplied": "sim.events",
    "EditRejected": "sim.events",
    "Event": "sim.events",
    "SamDetected": "sim.events",
    "TargetCollected": "sim.events",
    "TargetMissed": "sim.events",
    "Flight": "sim.flight",
    "DroneOutcome": "sim.outcome",
    "Outcome": "sim.outcome",
    "mission_outcome": "sim.outcome",
    "MAX_SPEED": "sim.pacing",
    "MIN_SPEED": "sim.pacing",
    "Clock": "sim.pacing",
    "Pacer": "sim.pacing",
    "SleepingClock": "sim.pacing",
    "WallClock": "sim.pacing",
    "DroneState": "sim.snapshot",
    "DroneTelemetry": "sim.snapshot",
    "FleetView": "sim.snapshot",
    "Snapshot": "sim.snapshot",
    "World": "sim.world",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name]), name)


__all__ = [
    "MAX_SPEED",
    "MIN_SPEED",
    "Clock",
    "Command",
    "CommandApplied",
    "CommandRejected",
    "Disable",
    "DroneHolding",
    "DroneLanded",
    "DroneLost",
    "DroneOutcome",
    "DroneState",
    "DroneTelemetry",
    "EditApplied",
    "EditRejected",
    "Event",
    "FleetView",
    "Flight",
    "FlyPath",
    "Hold",
    "Outcome",
    "PaceReport",
    "Pacer",
    "ResumeFlight",
    "ReturnToBase",
    "SamDetected",
    "Sim",
    "SimError",
    "SleepingClock",
    "Snapshot",
    "TargetCollected",
    "TargetMissed",
    "TickResult",
    "WallClock",
    "World",
    "mission_outcome",
    "run_paced",
]
