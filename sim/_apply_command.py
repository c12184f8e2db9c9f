"""Applying a command (``sim.commands``) to one drone at a tick boundary.

A command that can be applied changes the drone's flight and yields ``CommandApplied`` with
a detail (plus ``DroneLost`` for ``disable``); one that cannot yields ``CommandRejected``
with the reason: an unknown or lost drone, a path that does not start where the drone is or
whose waypoints are not ascending targets, a hold of a drone that is not flying, a resume of
one that is not holding, a return to an unknown airport or with no way around the known SAMs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import assert_never

from planner.geometry import Path, SamField
from sim import _kernels as K
from sim._environment import EnvironmentState
from sim._fleet import AIRPORT_TOLERANCE, Fleet, KeptFlight
from sim.commands import (
    START_TOLERANCE,
    Command,
    Disable,
    FlyPath,
    Hold,
    ResumeFlight,
    ReturnToBase,
)
from sim.errors import Rejected
from sim.events import CommandApplied, CommandRejected, DroneLost, Event
from sim.flight import Flight, slice_path

__all__ = ["apply_command", "apply_fly_paths"]


def apply_command(
    command: Command, *, tick: int, env: EnvironmentState, fleet: Fleet
) -> list[Event]:
    """Apply ``command`` at the start of ``tick``; returns its events (applied or
    rejected)."""
    if isinstance(command, FlyPath):
        return apply_fly_paths([command], tick=tick, env=env, fleet=fleet)
    extra: list[Event] = []
    try:
        i = _drone(fleet, command)
        match command:
            case Hold():
                detail = _hold(fleet, i)
            case ResumeFlight():
                detail = _resume(fleet, i)
            case ReturnToBase():
                detail = _return_to_base(env, fleet, i, command)
            case Disable():
                fleet.lose(i, "disabled")
                detail = "disabled"
                extra = [
                    DroneLost(tick=tick, drone=command.drone, reason="disabled", pos=fleet.xy(i))
                ]
            case _:  # pragma: no cover - the union is closed
                assert_never(command)
    except Rejected as exc:
        return [_rejected(tick, command, exc)]
    return [
        CommandApplied(tick=tick, drone=command.drone, command=command.kind, detail=detail),
        *extra,
    ]


def apply_fly_paths(
    commands: Sequence[FlyPath], *, tick: int, env: EnvironmentState, fleet: Fleet
) -> list[Event]:
    """Apply the ``fly_path`` commands due at the start of ``tick``, in their order: what
    one by one would do, their flights begun at once (a swarm's commit begins ~780 on one
    tick). One is checked against nothing another changes (the drone's position and
    status, the live targets), so each is checked as if it came first; a drone named twice
    flies the last. Returns each command's event, in order."""
    events: list[Event | None] = [None] * len(commands)
    begun: list[tuple[int, int, Flight]] = []  # (command's place, drone, flight)
    for n, command in enumerate(commands):
        try:
            i = _drone(fleet, command)
            begun.append((n, i, _flight_of(fleet, i, command)))
        except Rejected as exc:
            events[n] = _rejected(tick, command, exc)
    ids = [i for _, i, _ in begun]
    ends = fleet.set_flights(ids, [flight for _, _, flight in begun], K.FLYING)
    for i in ids:
        fleet.holds[i] = None
    airports = fleet.env.airports
    for (n, _, flight), end in zip(begun, ends.tolist()):
        to = f"to {airports[end].id}" if end >= 0 else "ending away from an airport"
        detail = f"{flight.length:.3f} km {to}, {len(flight.waypoints)} waypoint(s)"
        events[n] = CommandApplied(
            tick=tick, drone=commands[n].drone, command="fly_path", detail=detail
        )
    return [event for event in events if event is not None]


def _drone(fleet: Fleet, command: Command) -> int:
    """The commanded drone's index; Rejected if there is none or it is lost."""
    i = fleet.index.get(command.drone)
    if i is None:
        raise Rejected(f"no drone {command.drone!r}")
    if fleet.status[i] == K.LOST:
        raise Rejected("the drone is lost")
    return i


def _rejected(tick: int, command: Command, exc: Rejected) -> CommandRejected:
    return CommandRejected(tick=tick, drone=command.drone, command=command.kind, reason=str(exc))


def _flight_of(fleet: Fleet, i: int, command: FlyPath) -> Flight:
    """The flight ``command`` begins for drone ``i``; Rejected if it cannot."""
    path = command.path
    if not (path.length > 0.0 and math.isfinite(path.length)):
        raise Rejected("the path has no length (use hold)")
    here = fleet.xy(i)
    gap = math.dist(path.start, here)
    if gap > START_TOLERANCE:
        raise Rejected(
            f"the path starts at ({path.start[0]:.6f}, {path.start[1]:.6f}), {gap:.6g} km"
            f" from the drone at ({here[0]:.6f}, {here[1]:.6f})"
        )
    last = -math.inf
    for target_id, s in command.waypoints:
        if fleet.env.live_target(target_id) is None:
            raise Rejected(f"waypoint {target_id!r} is not a target")
        if not (0.0 <= s <= path.length + 1e-9) or s < last:
            raise Rejected(
                f"waypoint {target_id!r} at s={s:g}: arc lengths must be"
                f" ascending within [0, {path.length:g}]"
            )
        last = s
    return Flight(path, tuple(command.waypoints))


def _hold(fleet: Fleet, i: int) -> str:
    if fleet.status[i] != K.FLYING:
        raise Rejected(f"the drone is {K.STATUS_NAMES[fleet.status[i]]}, not flying")
    flight = fleet.flights[i]
    s = float(fleet.F[K.S, i])
    keep = KeptFlight(flight, s, flight.remaining_waypoints(s) if flight else ())
    fleet.start_hold(i, keep)
    return f"holding on a {fleet.config.hold_radius:g} km circle"


def _resume(fleet: Fleet, i: int) -> str:
    hold = fleet.holds[i]
    if fleet.status[i] != K.HOLDING or hold is None:
        raise Rejected("the drone is not holding")
    if hold.flight is None:
        raise Rejected("nothing to resume: the drone holds at the end of its path")
    rest = slice_path(hold.flight.path, hold.s)
    if rest is None:
        raise Rejected("nothing to resume: the kept flight is finished")
    circle = fleet.flights[i]
    assert circle is not None
    s = float(fleet.F[K.S, i])
    back = slice_path(circle.path, s)  # the rest of the orbit, back to the hold's start
    pieces = (back.pieces if back is not None else ()) + rest.pieces
    offset = (back.length if back is not None else 0.0) - hold.s
    path = Path(pieces, (back.length if back is not None else 0.0) + rest.length)
    waypoints = tuple((t, w + offset) for t, w in hold.waypoints)
    fleet.set_flight(i, Flight(path, waypoints), K.FLYING)
    fleet.holds[i] = None
    return f"back on the kept flight after {offset + hold.s:.3f} km of orbit"


def _return_to_base(env: EnvironmentState, fleet: Fleet, i: int, command: ReturnToBase) -> str:
    airport_id = command.airport or fleet.configs[i].home
    airport = env.airport(airport_id) if airport_id is not None else None
    if airport is None:
        raise Rejected(f"no airport {airport_id!r}")
    here = fleet.xy(i)
    if (
        fleet.status[i] in (K.PARKED, K.LANDED)
        and math.dist(here, (airport.x, airport.y)) <= AIRPORT_TOLERANCE
    ):
        raise Rejected(f"the drone is already at {airport_id}")
    known = env.known_sams()
    path = SamField(known).shortest_path(here, (airport.x, airport.y))
    if path is None or path.length <= 0.0:
        raise Rejected(
            f"no way from ({here[0]:.2f}, {here[1]:.2f}) to {airport_id} that avoids the known SAMs"
        )
    fleet.set_flight(i, Flight(path), K.FLYING)
    fleet.holds[i] = None
    return f"{path.length:.3f} km to {airport_id} avoiding {len(known)} known SAM(s)"
