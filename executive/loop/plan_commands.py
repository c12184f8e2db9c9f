"""A committed plan as the sim's commands: one ``FlyPath`` per planned drone, stamped for
the cut tick, starting exactly at the drone's checkpoint."""

from __future__ import annotations

from planner.mission import Mission
from planner.model import Solution
from sim.commands import FlyPath
from sim.flight import Flight

__all__ = ["fly_commands"]


def fly_commands(
    mission: Mission,
    solution: Solution,
    tick: int,
    airborne: set[str],
    live: set[str] | None = None,
) -> list[FlyPath]:
    """Commands that put ``solution`` in the air at ``tick``. A grounded drone with nothing
    to do gets no command (it stays where it is). With ``live``, waypoints of targets not in
    it are left out (an oracle's plan names targets that appear later: the drone collects
    them in passing if they exist by then)."""
    commands = []
    for drone_id, route in solution.routes.items():
        flight = Flight.from_route(mission, route.route)
        if flight is None:
            continue
        if drone_id not in airborne and not route.visited_targets:
            continue
        waypoints = flight.waypoints
        if live is not None:
            waypoints = tuple(w for w in waypoints if w[0] in live)
        commands.append(FlyPath(drone=drone_id, path=flight.path, waypoints=waypoints, tick=tick))
    return commands
