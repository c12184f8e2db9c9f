"""The safety layer's field of the known SAMs (``executive.loop.known_field``): one per set
of known SAMs, built in a worker when paced, never twice for the same SAMs."""

from __future__ import annotations

import asyncio
import threading

from executive.loop.known_field import KnownField
from planner.edits import AddSam, AddTarget, RemoveSam
from sim import World
from tests.executive.loop.test_safety import _left_to_the_layer, line_mission


def _world() -> World:
    return World(line_mission(timeline=[]))


def test_a_version_with_the_same_sams_takes_the_field_over():
    # A target edited bumps the known world's version; the SAMs are the same: the field
    # built for them is the answer, not a second build (55-68 ms at 500 SAMs, on the tick).
    world = _world()
    field = KnownField(None)
    world.apply_edit(AddSam(id="S1", pos=(30, 0), range=3))
    first = field.get(world)
    version = world.environment_version
    world.apply_edit(AddTarget(id="T9", x=20, y=8, priority=3, type="A"))
    assert world.environment_version != version
    assert field.ready(world) and field.get(world) is first
    assert field.builds == 1
    world.apply_edit(RemoveSam(id="S1"))
    assert not field.ready(world)
    assert field.get(world) is not first and field.builds == 2


def test_a_build_in_a_worker_is_waited_for_once_and_builds_do_not_pile_up(monkeypatch):
    # One build at a time: while a worker builds, a newer set of SAMs is not started (an
    # edit storm would start a thread per edit); whoever needs the newer one builds it.
    import executive.loop.known_field as module

    gate = threading.Event()
    real = module.field_of

    threads = []

    def slow(disks, workers=1):
        threads.append(workers)
        gate.wait(10)
        return real(disks, workers)

    monkeypatch.setattr(module, "field_of", slow)
    world = _world()
    field = KnownField(None, workers=2)
    world.apply_edit(AddSam(id="S1", pos=(30, 0), range=3))
    field.prefetch(world)
    assert field.in_worker == 1 and not field.ready(world)
    field.prefetch(world)  # the same SAMs: being built
    world.apply_edit(AddSam(id="S2", pos=(40, 0), range=3))
    field.prefetch(world)  # newer SAMs, a build still running: not a second thread
    assert field.in_worker == 1 == field.builds
    world.apply_edit(RemoveSam(id="S2"))  # back to the SAMs the worker builds
    gate.set()
    built = field.get(world)  # the worker's, waited for
    assert field.builds == 1 and list(built.true_radii) == [3.0]
    world.apply_edit(AddSam(id="S3", pos=(45, 0), range=2))
    field.prefetch(world)  # the worker is done: the next build starts
    assert field.in_worker == 2
    assert len(field.get(world).true_radii) == 2
    assert threads == [2, 2]  # each build on the threads the field was given


def test_a_sam_that_touches_no_flight_has_its_field_built_in_a_worker_when_paced():
    # A fuel check's way home after such a change built the field on the tick: paced, every
    # change of the known SAMs starts its build in a worker at once.
    scenario = line_mission(
        timeline=[{"t": 5, "op": "add_sam", "id": "S1", "pos": [30, 25], "range": 3}]
    )
    executive, sink = _left_to_the_layer(scenario)
    asyncio.run(executive.run(50.0, until=10 * 20))
    continued = [r for r in sink.records if getattr(r, "kind", None) == "CONTINUE"]
    assert continued and continued[0].payload["reason"] == "touches no planned path"
    # the start's SAMs' field (a paced check builds it before anything needs it), then S1's
    assert executive.safety.field.in_worker == 2 == executive.safety.field.builds
