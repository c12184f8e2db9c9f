"""The world as it truly is, advanced one fixed tick at a time.

``Sim`` (the driver: simpy time, stamped inputs, ``step()``), ``run_paced`` (real time x k
or as fast as possible) over a ``Pacer`` (when each tick is due, on an injected ``Clock``),
``World`` (truth and known environments, the fleet in arrays), the typed events, the
commands, ``FleetView.telemetry()`` (the per-drone telemetry frame) and ``mission_outcome``
(what a finished run achieved).
``sim`` imports ``planner``; never ``executive`` or ``dashboard``.
"""

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
