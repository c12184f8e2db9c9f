"""Words in an operator's command (CUT / REPLAN with text): the executive's ``Coordinate``.

``coordinate_live(text, executive)`` reads the words with the deterministic coordinator
against what the live run knows when the command is read (at a tick boundary): the known
environment (a SAM detected since is a known id), the targets collected so far, the fleet now
(sensors, fuel left, where each drone is: a command a drone cannot carry out is refused at
the tick it is read, never applied) and the constraints in force (a command says which
earlier order it replaces). It returns the ``CoordinatorVerdict`` the loop applies.
``mission.session`` passes it to every executive it builds; an executive without one refuses
words (``executive.contracts.Coordinate``).
"""

from __future__ import annotations

from agents.coordinator import coordinate_environment, fleet_from_state, verdict_of
from agents.words.state import from_executive
from executive.contracts import CoordinatorVerdict
from executive.loop import Executive

__all__ = ["coordinate_live"]


def coordinate_live(text: str, executive: Executive, /) -> CoordinatorVerdict:
    """The verdict on ``text`` over ``executive`` as it is now (started; read, never
    written)."""
    world = executive.sim.world
    collected = world.collected()
    # the plan in force, by drone: its targets not yet collected (a move's premise is checked
    # against it, and a move re-plans only the drones it names)
    allocation = {
        d: [t for t in ts if t not in collected] for d, ts in executive.rounds.intent.items()
    }
    decision = coordinate_environment(
        text,
        world.known_environment,
        list(executive.scenario.drone_configs),
        collected,
        fleet=fleet_from_state(from_executive(executive)),
        in_force=executive.constraints.model_dump(mode="json"),
        planned={t: d for d, ts in allocation.items() for t in ts},
    )
    return verdict_of(decision, allocation)
