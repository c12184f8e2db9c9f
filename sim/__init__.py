"""The world as it truly is, advanced one fixed tick at a time.

``Sim`` (the driver: simpy time, stamped inputs, ``step()``), ``run_paced`` (real time x k
or as fast as possible), ``World`` (truth and known environments, the fleet in arrays),
the typed events, the commands, and ``mission_outcome`` (what a finished run achieved).
``sim`` imports ``planner``; never ``executive`` or ``dashboard``.
"""

from sim.commands import Command, Disable, FlyPath, Hold, ResumeFlight, ReturnToBase
from sim.driver import Clock, PaceReport, Sim, TickResult, WallClock, run_paced
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
from sim.snapshot import DroneState, FleetView, Snapshot
from sim.world import World

__all__ = [
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
    "EditApplied",
    "EditRejected",
    "Event",
    "FleetView",
    "Flight",
    "FlyPath",
    "Hold",
    "Outcome",
    "PaceReport",
    "ResumeFlight",
    "ReturnToBase",
    "SamDetected",
    "Sim",
    "SimError",
    "Snapshot",
    "TargetCollected",
    "TargetMissed",
    "TickResult",
    "WallClock",
    "World",
    "mission_outcome",
    "run_paced",
]
