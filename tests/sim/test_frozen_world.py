"""``World.frozen()``: the world as it was at one tick, read in another thread while the
sim ticks on (a round's remainder and a replay picture are built from it off the tick).
Its reads equal the world's at the freeze, and nothing the world does later reaches it."""

from __future__ import annotations

from typing import Any

from executive.loop.cut import build_replan
from planner.edits import AddTarget, MoveSam, RemoveTarget
from sim import Hold, Sim
from sim.world import World
from tests.sim.conftest import efficient_plan


def _reads(world: World, tick: int) -> dict[str, Any]:
    """Everything a cut and a picture read, as plain values."""
    known, truth = world.known_environment, world.truth_environment
    return {
        "tick": world.tick,
        "drones": {
            d: (
                world.status(d),
                world.position(d),
                world.fuel(d),
                world.progress(d),
                world.checkpoint(d, tick),
                world.flight(d),
                world.kept_path(d),
            )
            for d in world.drone_ids
        },
        "collected": world.collected(),
        "known": known.model_dump(),
        "truth": truth.model_dump(),
        "fleet": world.fleet_view(world.tick).fleet.tolist(),
    }


def test_a_frozen_world_reads_as_the_world_did_and_keeps_out_what_happens_later(demo):
    mission, solution = efficient_plan(demo)
    sim = Sim(demo, solution, mission=mission)
    sim.run(120)
    drone = next(iter(demo.drone_configs))
    sim.submit(Hold(drone=drone, tick=sim.tick))
    sim.run(sim.tick + 5)  # one drone holds (its kept flight is read too)
    world = sim.world
    cut = world.tick + 15
    before = _reads(world, cut)
    remainder = build_replan(world, cut, reserve=1.0).scenario.model_dump()
    frozen = world.frozen()
    assert _reads(frozen, cut) == before
    # The world ticks on, collects, and changes its environment: the copy does not.
    target = next(iter(world.known_environment.targets))
    sam = world.known_environment.sams[0]
    sim.submit(AddTarget(id="NEW", x=1.0, y=2.0, priority=5, type="EO", tick=sim.tick))
    sim.submit(RemoveTarget(id=target.id, tick=sim.tick))
    sim.submit(MoveSam(id=sam.id, pos=(sam.x + 1.0, sam.y), tick=sim.tick))
    sim.run(sim.tick + 200)
    assert _reads(world, cut) != before
    assert _reads(frozen, cut) == before
    assert build_replan(frozen, cut, reserve=1.0).scenario.model_dump() == remainder


def test_a_view_the_world_had_not_drawn_is_drawn_from_the_copy(demo):
    mission, solution = efficient_plan(demo)
    sim = Sim(demo, solution, mission=mission)
    sim.run(40)
    sam = sim.world.known_environment.sams[0]
    sim.submit(MoveSam(id=sam.id, pos=(sam.x + 2.0, sam.y), tick=sim.tick))
    sim.step()  # the environment changed: its views are drawn again on their next read
    frozen = sim.world.frozen()
    known, truth = sim.world.known_environment, sim.world.truth_environment
    sim.submit(MoveSam(id=sam.id, pos=(sam.x - 2.0, sam.y), tick=sim.tick))
    sim.submit(AddTarget(id="NEW", x=1.0, y=2.0, priority=5, type="EO", tick=sim.tick))
    sim.run(sim.tick + 50)
    assert frozen.known_environment.model_dump() == known.model_dump()
    assert frozen.truth_environment.model_dump() == truth.model_dump()
    assert sim.world.known_environment.model_dump() != known.model_dump()
