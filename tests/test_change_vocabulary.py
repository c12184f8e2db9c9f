"""The vocabulary of a change (``planner.edits``, ``planner.changes``) is complete, and every
place that reads it agrees with it.

Every edit op says what it means (``ChangeKind``), and each reader is checked against it by
what it does, not by what it says: the executive asks for a replan of the kind's trigger,
lessons file it under that class, the sim bumps its environment only for an environment
edit, a replay seek and a what-if change their world with it (or leave it alone, for the
reason the kind gives), the generator places each of its classes as the edit that names it.
Then the three worlds ``planner.changes.apply_edit`` changes -- the sim's slot arrays, a
replay's scene, a scenario's typed copy -- are driven through random edit sequences and
must hold the same targets, SAMs and drones after every edit the sim accepts."""

from __future__ import annotations

import copy
import math
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.words.lessons import disruption_classes
from executive.loop import Policy
from executive.loop.loop import Executive
from executive.traces.timeline import apply_event
from planner import geo
from planner.changes import ScenarioPicture, apply_edit
from planner.edits import (
    DISRUPTION_CLASSES,
    EDIT_MODELS,
    EDIT_OPS,
    ENV_EDITS,
    FLEET_EDITS,
    TRIGGERS,
    AddSam,
    AddTarget,
    ChangeKind,
    DisableDrone,
    Edit,
    MoveSam,
    MoveTarget,
    RemoveSam,
    RemoveTarget,
    RevealSam,
    SetFuel,
    SetPriority,
    model_of,
)
from planner.model import Scenario
from planner.scenario import parse_scenario
from planner.scenario.generator import DISRUPTIONS, SuiteSpec, generate_mission
from sim import EditRejected, World

DRONE = {"fuelBudget": 100.0, "home_airport": "A1", "accessibleTargets": "ALL"}


def _base() -> Scenario:
    """Two airports, targets T1 and T2, a known SAM S1, drones 1 and 2 parked at A1."""
    return parse_scenario(
        {
            "environment": {
                "airports": [{"id": "A1", "x": 0, "y": 0}, {"id": "A2", "x": 40, "y": 0}],
                "targets": [
                    {"id": "T1", "x": 10, "y": 10, "priority": 5, "type": "A"},
                    {"id": "T2", "x": 20, "y": 5, "priority": 3, "type": "B"},
                ],
                "sams": [{"id": "S1", "pos": [20, 20], "range": 3}],
            },
            "drone_configs": {"1": dict(DRONE), "2": dict(DRONE)},
        }
    )


# A hidden SAM the sim and a replay's picture hold from the start (a scenario has none).
HIDDEN = AddSam(id="H1", pos=(30, 30), range=2, hidden=True)

# One edit of every op, each valid on the base world with HIDDEN added.
SAMPLES: dict[str, Edit] = {
    "add_target": AddTarget(id="T9", x=30, y=10, priority=7, type="C"),
    "remove_target": RemoveTarget(id="T1"),
    "move_target": MoveTarget(id="T1", x=12, y=14),
    "set_priority": SetPriority(id="T1", priority=9),
    "add_sam": AddSam(id="S9", pos=(30, 5), range=2),
    "remove_sam": RemoveSam(id="S1"),
    "move_sam": MoveSam(id="S1", pos=(25, 25), range=4),
    "reveal_sam": RevealSam(id="H1"),
    "disable_drone": DisableDrone(drone="2"),
    "set_fuel": SetFuel(drone="1", fuel=50),
}


def _world() -> World:
    world = World(_base())
    world.apply_edit(HIDDEN)
    return world


def _scene() -> dict[str, Any]:
    """A replay's picture of the base world (as ``mission.live.scene`` makes it)."""
    env = _base().environment
    scene: dict[str, Any] = {
        "targets": [t.model_dump() | {"status": "pending", "drone": None} for t in env.targets],
        "sams": [
            {"id": s.id, "x": s.x, "y": s.y, "range": s.range, "known": True} for s in env.sams
        ],
        "drones": {"1": {"status": "parked"}, "2": {"status": "parked"}},
    }
    _seek(scene, HIDDEN, truth=True)
    return scene


def _seek(scene: dict[str, Any], edit: Edit, *, truth: bool = False) -> None:
    """Apply ``edit`` to ``scene`` as a replay seek does, from its stored event."""
    kind = "truth:edit_applied" if truth else "edit_applied"
    apply_event(scene, {"kind": kind, "payload": {"edit": edit.model_dump(mode="json")}})


def test_the_samples_cover_every_op():
    assert set(SAMPLES) == set(EDIT_OPS)
    assert all(edit.op == op and isinstance(edit, model_of(op)) for op, edit in SAMPLES.items())


@pytest.mark.parametrize("model", EDIT_MODELS, ids=EDIT_OPS)
def test_every_kind_says_what_it_means(model):
    change = model.change
    assert isinstance(change, ChangeKind)
    assert change.trigger in TRIGGERS and change.trigger in Policy().triggers
    assert change.scope in ("environment", "fleet")
    assert (model in ENV_EDITS) == (change.scope == "environment")
    assert (model in FLEET_EDITS) == (change.scope == "fleet")
    for reason in (change.seek, change.what_if):
        assert reason is None or len(reason) > 20  # "not applicable" says why


def test_an_edit_kind_without_its_meaning_fails_on_import():
    from planner.edits import _Edit

    with pytest.raises(TypeError, match="must say what it means"):

        class Unsaid(_Edit):
            op: str = "unsaid"


@pytest.mark.parametrize("op", EDIT_OPS)
def test_the_executive_asks_for_a_replan_of_the_kinds_trigger(op):
    """The sim's events for the edit, fed to the loop's reaction: the trigger asked for
    (directly, or through the safety layer for a SAM made known, or the SAM-cleared check)
    is the kind's."""
    edit = SAMPLES[op]
    world = _world()
    seen, _ = world.apply_edit(edit)
    assert seen and not any(isinstance(e, EditRejected) for e in seen)
    asked: list[str] = []
    loop = SimpleNamespace(
        safety=SimpleNamespace(sam_known=lambda sam, label: asked.append("sam"), lost=print),
        rounds=SimpleNamespace(trigger=lambda kind, label: asked.append(kind)),
        _sam_cleared=lambda sam, label: asked.append("sam_cleared"),
        policy=Policy(),
        reserve_km=1.0,
        leak_reserve={},
    )
    # The loop's reaction is private to it; this test checks its dispatch alone, on a stub.
    loop._react_edit = lambda e: Executive._react_edit(loop, e)  # noqa: SLF001
    for event in seen:
        Executive._react(loop, event)  # noqa: SLF001
    assert edit.change.trigger in asked


@pytest.mark.parametrize("op", EDIT_OPS)
def test_lessons_file_the_edit_under_its_trigger(op):
    edit = SAMPLES[op]
    scenario = _base().model_copy(update={"timeline": [edit]})
    assert disruption_classes(scenario) == {edit.change.trigger}


@pytest.mark.parametrize("op", EDIT_OPS)
def test_the_sim_changes_its_environment_for_an_environment_edit_only(op):
    edit = SAMPLES[op]
    world = _world()
    before = world.environment_version
    world.apply_edit(edit)
    assert (world.environment_version > before) == isinstance(edit, ENV_EDITS)


@pytest.mark.parametrize("op", EDIT_OPS)
def test_a_replay_seek_applies_the_edit_or_says_why_not(op):
    edit = SAMPLES[op]
    scene = _scene()
    before = copy.deepcopy(scene)
    _seek(scene, edit)
    if edit.change.seek is None:
        assert scene != before
    else:
        assert scene == before


@pytest.mark.parametrize("op", EDIT_OPS)
def test_a_what_if_applies_the_edit_or_says_why_not(op):
    edit = SAMPLES[op]
    base = _base()
    world = ScenarioPicture(base)
    apply_edit(world, edit)
    changed = world.scenario()
    if edit.change.what_if is None:
        assert changed != base
    else:
        assert changed == base


def test_the_generator_places_each_class_as_the_edit_that_names_it():
    named = [c for m in EDIT_MODELS for c in m.change.disruptions]
    assert sorted(named) == sorted(DISRUPTION_CLASSES)  # each class: exactly one kind
    assert (*DISRUPTION_CLASSES, "combo") == DISRUPTIONS
    for cls in DISRUPTION_CLASSES:
        spec = SuiteSpec(
            seed=3, count=1, disruptions=[cls], iterations=50, targets=(8, 10), sams=(2, 3)
        )
        made = generate_mission(spec, 0)
        assert made.disruption == cls
        timeline = made.scenario["timeline"]
        assert len(timeline) == (2 if cls == "leak_twice" else 1)  # a second leak: two edits
        for placed in timeline:
            assert cls in model_of(placed["op"]).change.disruptions


def test_the_geo_frames_positioned_edits_are_the_models():
    """``planner.geo`` sits below the edits and names them by hand: the same sets (its
    private ones: nothing else may use them)."""
    target_edits, sam_edits = geo._TARGET_EDITS, geo._SAM_EDITS  # noqa: SLF001
    assert {o for o, m in zip(EDIT_OPS, EDIT_MODELS) if "x" in m.model_fields} == target_edits
    assert {o for o, m in zip(EDIT_OPS, EDIT_MODELS) if "pos" in m.model_fields} == sam_edits


# ----- the three worlds hold the same after the same edits --------------------------------

TARGET_IDS = ("T1", "T2", "T3", "T9")
SAM_IDS = ("S1", "S2", "H1", "S9")
coord = st.floats(1, 39, allow_nan=False).map(lambda v: round(v, 3))


def _edits() -> st.SearchStrategy[Edit]:
    target, sam, drone = (
        st.sampled_from(TARGET_IDS),
        st.sampled_from(SAM_IDS),
        st.sampled_from(("1", "2")),
    )
    pos = st.tuples(coord, coord)
    rng = st.floats(0.5, 4, allow_nan=False)
    return st.one_of(
        st.builds(
            AddTarget,
            id=target,
            x=coord,
            y=coord,
            priority=st.integers(1, 10),
            type=st.sampled_from("ABC"),
        ),
        st.builds(RemoveTarget, id=target),
        st.builds(MoveTarget, id=target, x=coord, y=coord),
        st.builds(SetPriority, id=target, priority=st.integers(0, 10)),
        st.builds(AddSam, id=sam, pos=pos, range=rng, hidden=st.booleans()),
        st.builds(RemoveSam, id=sam),
        st.builds(MoveSam, id=sam, pos=pos, range=st.none() | rng),
        st.builds(RevealSam, id=sam),
        st.builds(DisableDrone, drone=drone),
        st.builds(SetFuel, drone=drone, fuel=st.floats(0, 200, allow_nan=False)),
    )


def _sim_state(world: World) -> tuple[dict, dict, dict]:
    truth = world.truth_environment
    known = {s.id for s in world.known_environment.sams}
    targets = {t.id: (t.x, t.y, t.priority, t.type) for t in truth.targets}
    sams = {s.id: (s.x, s.y, s.range, s.id in known) for s in truth.sams}
    drones = {d: (world.status(d) != "lost", world.fuel(d)) for d in world.drone_ids}
    return targets, sams, drones


def _picture_state(world: ScenarioPicture) -> tuple[dict, dict, dict]:
    targets = {t.id: (t.x, t.y, t.priority, t.type) for t in world.targets.values()}
    sams = {s.id: (s.x, s.y, s.range, known) for s, known in world.sams.values()}
    drones = {d: (c.enabled, c.fuel_budget) for d, c in world.drones.items()}
    return targets, sams, drones


def _scene_state(scene: dict[str, Any]) -> tuple[dict, dict]:
    targets = {t["id"]: (t["x"], t["y"], t["priority"], t["type"]) for t in scene["targets"]}
    sams = {s["id"]: (s["x"], s["y"], s["range"], s["known"]) for s in scene["sams"]}
    return targets, sams


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_edits(), max_size=14))
def test_the_sim_a_replay_and_a_scenario_copy_agree_edit_after_edit(edits):
    world, picture, scene = _world(), ScenarioPicture(_base()), _scene()
    apply_edit(picture, HIDDEN)  # all three hold H1, hidden
    for edit in edits:
        seen, hidden = world.apply_edit(edit)
        if any(isinstance(e, EditRejected) for e in seen + hidden):
            continue  # the rule (sim.edit_check) refused it: no world sees it
        apply_edit(picture, edit)
        _seek(scene, edit, truth=bool(hidden))
        sim_targets, sim_sams, sim_drones = _sim_state(world)
        assert _picture_state(picture) == (sim_targets, sim_sams, sim_drones)
        assert _scene_state(scene) == (sim_targets, sim_sams)
    # and the scenario they make: the known world (a what-if's), or every SAM (the oracle's)
    known = picture.scenario()
    assert {s.id for s in known.environment.sams} == {s.id for s in world.known_environment.sams}
    truth = picture.scenario(hidden_known=True)
    assert {s.id: s.pos for s in truth.environment.sams} == {
        s.id: s.pos for s in world.truth_environment.sams
    }
    assert math.isclose(
        sum(t.priority for t in truth.environment.targets),
        sum(t.priority for t in world.truth_environment.targets),
    )
