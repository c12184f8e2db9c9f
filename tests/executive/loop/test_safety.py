"""The safety layer keeps every drone out of every SAM the executive knows about, in every
mode: auto, review with nobody answering, paused, a replan that never ends, a planner that
fails, slow agents; and a SAM over a drone's home never fails the round for the others.

The world: a line from A1 (0, 0) to A2 (60, 0) with targets on it; a SAM announced on the
line ahead of the drone mid-flight. A drone lost inside a SAM that was known before the
loss fails every test here.
"""

from __future__ import annotations

import asyncio
import math
import threading
from typing import Any

import numpy as np
import pytest

from agents.engines import make_engine
from agents.planning.round import AgentPlanner
from executive.contracts import (
    EventRecord,
    HumanCommand,
    InputRecord,
    PlanOutcome,
    PlanRequest,
    TelemetryRecord,
)
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.traces.audit import lost_to_known_sams
from executive.traces.replay import replay
from executive.traces.sinks import ListSink
from planner.edits import parse_edit
from planner.model import Scenario
from planner.scenario import parse_scenario

SAM_AHEAD = {"t": 30, "op": "add_sam", "id": "S1", "pos": [30.0, 0.0], "range": 3.0}


def line_mission(*, timeline=(), drones=None, airports=None, targets=None) -> Scenario:
    return parse_scenario(
        {
            "environment": {
                "airports": airports
                or [{"id": "A1", "x": 0, "y": 0}, {"id": "A2", "x": 60, "y": 0}],
                "targets": targets
                or [
                    {"id": "T1", "x": 20, "y": 0, "priority": 5, "type": "A"},
                    {"id": "T2", "x": 45, "y": 0, "priority": 5, "type": "A"},
                ],
                "sams": [],
            },
            "drone_configs": drones
            or {
                "1": {
                    "fuelBudget": 200,
                    "home_airport": "A1",
                    "end_airport": "A2",
                    "accessibleTargets": "ALL",
                }
            },
            "sim": {"speed": 0.2},
            "timeline": list(timeline),
        }
    )


class _Failing:
    """Plans the first mission, then fails every replan (a planner that crashed)."""

    def __init__(self, inner) -> None:
        self.inner = inner

    async def plan(self, request: PlanRequest) -> PlanOutcome:
        if request.trigger != "initial":
            raise RuntimeError("the planner crashed")
        return await self.inner.plan(request)


class _Stuck:
    """Plans the first mission, then never answers (a replan that runs forever)."""

    def __init__(self, inner) -> None:
        self.inner = inner

    async def plan(self, request: PlanRequest) -> PlanOutcome:
        if request.trigger != "initial":
            await asyncio.Event().wait()
        return await self.inner.plan(request)


class _SlowEngine:
    """Every agent call takes longer than the run (agents on a very bad day)."""

    name = "slow"
    model = "slow-1"

    async def complete(self, call, *, timeout_s: float):
        await asyncio.sleep(3600)


def _planner(sink, *, engine=None):
    return AgentPlanner(
        engine or make_engine("rules"), sink, iterations=300, use_agents=engine is not None
    )


def _left_to_the_layer(scenario: Scenario) -> tuple[Executive, ListSink]:
    """An executive whose replans never answer: no plan takes over, the safety layer acts."""
    sink = ListSink()
    executive = Executive(
        scenario,
        planner=_Stuck(_planner(sink)),
        sink=sink,
        options=LoopOptions(policy=Policy(batch_iterations=300)),
    )
    return executive, sink


def _fly(scenario, *, planner=None, policy=None, commands=(), edits=(), speed=None, engine=None):
    """Run to the end; ``commands``/``edits`` are (tick, item) given at that tick."""
    sink = ListSink()
    executive = Executive(
        scenario,
        planner=planner or _planner(sink, engine=engine),
        sink=sink,
        options=LoopOptions(policy=policy or Policy(batch_iterations=300)),
    )
    due = sorted([*commands, *edits], key=lambda item: item[0])

    def on_tick(result) -> None:
        while due and result.tick + 1 >= due[0][0]:
            _, item = due.pop(0)
            if isinstance(item, HumanCommand):
                executive.command(item)
            else:
                executive.edit(item)

    executive.watch(on_tick=on_tick)
    report = asyncio.run(executive.run(speed))
    return executive, sink, report


def _events(sink: ListSink, kind: str) -> list[EventRecord]:
    return [r for r in sink.of(EventRecord) if r.kind == kind]


def _assert_safe(sink: ListSink, report) -> None:
    assert lost_to_known_sams(sink.records) == []
    assert report.outcome.lost == [], report.outcome.lost


# ----- every mode ---------------------------------------------------------------------


def test_auto_replans_around_a_sam_on_the_path():
    _, sink, report = _fly(line_mission(timeline=[SAM_AHEAD]))
    _assert_safe(sink, report)
    assert [r.status for r in report.replans] == ["committed"]
    assert report.outcome.total_points == 10


def test_review_with_nobody_answering_diverts_the_drone_around_it():
    _, sink, report = _fly(
        line_mission(timeline=[SAM_AHEAD]), policy=Policy(commit="review", batch_iterations=300)
    )
    _assert_safe(sink, report)
    assert [r.status for r in report.replans] == ["review"]  # never approved, never flown
    divert = _events(sink, "SAFETY_DIVERT")
    assert divert and divert[0].payload["drone"] == "1" and divert[0].payload["sam"] == "S1"
    assert divert[0].payload["targets"] == ["T2"]  # the same targets, around the SAM
    assert report.outcome.total_points == 10  # both targets collected anyway
    assert report.safety_actions >= 1


def test_a_planner_that_fails_leaves_no_drone_on_an_unsafe_flight():
    sink = ListSink()
    _, sink, report = _fly(line_mission(timeline=[SAM_AHEAD]), planner=_Failing(_planner(sink)))
    _assert_safe(sink, report)
    assert [r.status for r in report.replans] == ["failed"]
    fallback = _events(sink, "SAFETY_FALLBACK")
    assert fallback and fallback[0].payload["actions"] == {"1": "divert"}


def test_a_replan_that_never_ends_does_not_hold_safety_back():
    sink = ListSink()
    _, sink, report = _fly(
        line_mission(timeline=[SAM_AHEAD]), planner=_Stuck(_planner(sink)), speed=50.0
    )
    _assert_safe(sink, report)
    assert _events(sink, "SAFETY_DIVERT")  # acted while the round was still "planning"


def test_slow_agents_change_nothing_for_safety():
    _, sink, report = _fly(line_mission(timeline=[SAM_AHEAD]), engine=_SlowEngine(), speed=200.0)
    _assert_safe(sink, report)
    assert report.replans[0].status == "committed"  # the fast tier did not wait for them


def test_a_sam_added_over_a_paused_drones_circle_moves_it_away():
    scenario = line_mission()
    pause_tick = 400  # the drone is at x = 4 km, heading east; it holds on a 1 km circle
    lap = round(2 * math.pi * 1.0 / 0.2 * 20)  # ticks for one lap of the holding circle
    # Back at the bottom of its circle after a lap: a SAM over the top of the circle.
    sam = parse_edit({"op": "add_sam", "id": "S2", "pos": [4.0, 2.9], "range": 1.5})
    _, sink, report = _fly(
        scenario,
        commands=[(pause_tick, HumanCommand("PAUSE"))],
        edits=[(pause_tick + lap + 2, sam)],
    )
    _assert_safe(sink, report)
    assert _events(sink, "PAUSE")
    moved = _events(sink, "SAFETY_RETURN") + _events(sink, "SAFETY_HOLD")
    assert moved and moved[0].payload["drone"] == "1"
    assert "holding circle" in moved[0].payload["reason"]


def test_a_sam_over_the_end_airport_does_not_fail_the_round():
    two = {
        "1": {
            "fuelBudget": 200,
            "home_airport": "A1",
            "end_airport": "A2",
            "accessibleTargets": "ALL",
        },
        "2": {"fuelBudget": 200, "home_airport": "A1", "accessibleTargets": "ALL"},
    }
    # An operator may add what a scenario file may not: a SAM over an airport, mid-flight.
    over_a2 = parse_edit({"op": "add_sam", "id": "S3", "pos": [60.0, 0.0], "range": 4.0})
    _, sink, report = _fly(line_mission(drones=two), edits=[(400, over_a2)])
    _assert_safe(sink, report)
    committed = [r for r in report.replans if r.status == "committed"]
    assert committed, [(r.status, r.reasons) for r in report.replans]
    assert any("cannot reach its end airport A2" in reason for reason in committed[0].reasons)
    # D1 lands at A1 instead of flying into the SAM over A2
    assert report.outcome.drones["1"].status == "landed"


def test_fuel_safety_covers_holding_drones():
    # Paused for good with little fuel: the holding drone is sent home before it runs dry.
    drones = {
        "1": {
            "fuelBudget": 70,
            "home_airport": "A1",
            "end_airport": "A2",
            "accessibleTargets": "ALL",
        }
    }
    _, sink, report = _fly(
        line_mission(
            drones=drones, targets=[{"id": "T1", "x": 30, "y": 0, "priority": 5, "type": "A"}]
        ),
        commands=[(1000, HumanCommand("PAUSE"))],
    )
    assert report.outcome.lost == []
    back = _events(sink, "RETURN_TO_BASE")
    assert back and back[0].payload["drone"] == "1"
    assert report.outcome.drones["1"].status == "landed"


def test_safety_actions_replay_exactly():
    executive, sink, report = _fly(
        line_mission(timeline=[SAM_AHEAD]), policy=Policy(commit="review", batch_iterations=300)
    )
    assert _events(sink, "SAFETY_DIVERT")
    inputs: list[dict[str, Any]] = [
        {"kind": r.kind, "payload": r.payload, "source": r.source, "tick": r.tick}
        for r in sink.of(InputRecord)
    ]
    recorded = {r.tick: r.state_hash for r in sink.records if type(r).__name__ == "StateHashRecord"}
    result = replay(
        executive.scenario.model_dump(mode="json", by_alias=True), inputs, recorded, hash_every=20
    )
    assert result.exact and result.final_hash == report.outcome.state_hash


@pytest.mark.parametrize("commit", ["auto", "review"])
def test_a_hidden_sam_detected_by_sensors_is_avoided(commit):
    hidden = {**SAM_AHEAD, "hidden": True, "t": 5}
    _, sink, report = _fly(
        line_mission(timeline=[hidden]), policy=Policy(commit=commit, batch_iterations=300)
    )
    assert _events(sink, "sam_detected")
    _assert_safe(sink, report)


# ----- pause: the plan's margin is watched, and RESUME replans ------------------------

PAUSE_MISSION = {
    "targets": [
        {"id": "T1", "x": 20, "y": 10, "priority": 5, "type": "A"},
        {"id": "T2", "x": 45, "y": -10, "priority": 5, "type": "A"},
    ],
    "drones": {
        "1": {
            "fuelBudget": 80,  # A1 -> T1 -> T2 -> A2 is 72.4 km: 7.6 km of margin
            "home_airport": "A1",
            "end_airport": "A2",
            "accessibleTargets": "ALL",
        }
    },
}
LONG_PAUSE = [(200, HumanCommand("PAUSE")), (1700, HumanCommand("RESUME"))]  # 75 s: 15 km


@pytest.mark.parametrize("commit", ["auto", "review"])
def test_a_pause_that_spends_the_margin_is_said_and_replanned_at_resume(commit):
    """Paused 75 s, the drone burns 15 km holding: its plan no longer fits its fuel. That is
    said while paused (with the margin), and RESUME replans the remainder: committed in auto,
    offered in review; in neither does the drone run dry."""
    _, sink, report = _fly(
        line_mission(**PAUSE_MISSION),
        commands=LONG_PAUSE,
        policy=Policy(commit=commit, batch_iterations=300),
    )
    _assert_safe(sink, report)
    told = _events(sink, "PLAN_INFEASIBLE")
    assert told and 200 < told[0].tick < 1700
    assert told[0].payload["paused"] is True and told[0].payload["margin"] < 0
    assert told[0].payload["fix"] == "a replan at RESUME"
    at_resume = [r for r in report.replans if r.trigger == "operator:RESUME"]
    assert at_resume, [(r.trigger, r.status) for r in report.replans]
    assert at_resume[0].status == ("committed" if commit == "auto" else "review")
    drone = report.outcome.drones["1"]
    assert drone.status == "landed" and drone.fuel_left >= 0
    if commit == "auto":  # the new plan fits: T1 kept, T2 given up
        assert drone.collected == ["T1"]


def test_a_short_pause_leaves_the_plan_feasible_and_says_nothing():
    _, sink, report = _fly(
        line_mission(**PAUSE_MISSION),
        commands=[(200, HumanCommand("PAUSE")), (300, HumanCommand("RESUME"))],
    )
    _assert_safe(sink, report)
    assert not _events(sink, "PLAN_INFEASIBLE")
    assert report.outcome.drones["1"].collected == ["T1", "T2"]


def test_a_plan_left_unsafe_in_review_is_said_with_when_the_layer_acts():
    """Review, nobody answers: the plan in force meets the announced SAM far ahead. That is
    said at once (PLAN_UNSAFE: when it would enter, when the layer acts), and the layer acts
    when it said it would."""
    _, sink, report = _fly(
        line_mission(timeline=[SAM_AHEAD]), policy=Policy(commit="review", batch_iterations=300)
    )
    _assert_safe(sink, report)
    said = _events(sink, "PLAN_UNSAFE")
    assert said and said[0].payload["drone"] == "1" and said[0].payload["sam"] == "S1"
    assert said[0].tick <= 600 + Policy().safety_every  # the SAM is announced at t = 30 s
    warning = said[0].payload
    assert 0 < warning["acts_in_s"] < warning["in_s"]
    acted = _events(sink, "SAFETY_DIVERT")
    assert acted and acted[0].payload["drone"] == "1"
    expected = said[0].tick + warning["acts_in_s"] * 20
    assert abs(acted[0].tick - expected) <= 2 * Policy().safety_every


def test_a_divert_far_from_the_geo_origin_clears_the_true_geodesic_disk():
    """3,000 km east of the origin the km frame stretches by ~4 % across the radial: a divert
    around the flat disk would pass inside the SAM's true disk. The safety layer diverts
    around its geodesic cover: the track flown stays outside the true disk (pyproj.Geod)."""
    from planner.geo import local_frame
    from planner.geodesy import polyline_geodesic_clearance
    from planner.model import Sam

    far = 3000.0
    data = line_mission(
        timeline=[{**SAM_AHEAD, "pos": [far + 30.0, 0.0]}],
        airports=[{"id": "A1", "x": far, "y": 0}, {"id": "A2", "x": far + 60, "y": 0}],
        targets=[
            {"id": "T1", "x": far + 20, "y": 0, "priority": 5, "type": "A"},
            {"id": "T2", "x": far + 45, "y": 0, "priority": 5, "type": "A"},
        ],
    ).model_dump(mode="json", by_alias=True)
    data["geo"] = {"lat0": 0.0, "lon0": 0.0}
    scenario = parse_scenario(data)
    _, sink, report = _fly(scenario, policy=Policy(commit="review", batch_iterations=300))
    _assert_safe(sink, report)
    assert _events(sink, "SAFETY_DIVERT")  # nobody approves the replan: the layer diverts
    track = np.array(
        [
            (r.drones["1"]["x"], r.drones["1"]["y"])
            for r in sink.of(TelemetryRecord)
            if "1" in r.drones and r.drones["1"]["status"] == "flying"
        ]
    )
    sam = Sam.model_validate({"id": "S1", "pos": [far + 30.0, 0.0], "range": 3.0})
    worst = polyline_geodesic_clearance(local_frame(scenario.geo), track, [sam])
    assert len(track) > 100
    assert worst.clearance_km > 0, worst
    # and the divert is a tight one: it passes within half a km of the true disk
    assert worst.clearance_km < 0.5, worst


def test_the_ways_home_share_one_sam_field_per_known_world():
    # Building the known SAMs' field is 55-68 ms at 500 SAMs: once per known-world
    # version, not once per way home.
    sink = ListSink()
    executive = Executive(
        line_mission(timeline=[SAM_AHEAD]),
        planner=_planner(sink),
        sink=sink,
        options=LoopOptions(policy=Policy(batch_iterations=300)),
    )
    seen: list[tuple[int, int, str | None]] = []  # (tick, fields built, airport)

    def on_tick(result) -> None:
        if result.tick in (5, 6, 7) or result.tick == 30 * 20 + 5:
            way = executive.safety._way_home("1")  # noqa: SLF001
            seen.append(
                (result.tick, executive.safety.field.builds, None if way is None else way[0].id)
            )

    executive.watch(on_tick=on_tick)
    asyncio.run(executive.run(None, until=30 * 20 + 10))
    assert [n for _, n, _ in seen] == [1, 1, 1, 2]  # again only once S1 became known
    assert all(airport == "A2" for *_, airport in seen)  # its allowed end, within its fuel
    assert executive.safety.field.in_worker == 0  # as fast as possible: built where asked


# A SAM known when the drone is already within the horizon the layer acts in, with room.
SAM_NEAR = {"t": 30, "op": "add_sam", "id": "S1", "pos": [14.0, 0.0], "range": 3.0}


def test_a_divert_paced_waits_for_the_field_a_worker_builds_not_the_tick():
    """Paced, the field for the SAM just known is built in a worker (nogil numba) and the
    divert comes a tick or more later, the drone having room, instead of the tick waiting
    for the build (as fast as possible it is built on the tick that acts, as before: the
    test above). The drone goes round all the same."""
    executive, sink = _left_to_the_layer(line_mission(timeline=[SAM_NEAR]))
    report = asyncio.run(executive.run(50.0, until=40 * 20))
    _assert_safe(sink, report)
    known = _events(sink, "ENV_EDITS")[0].tick
    divert = _events(sink, "SAFETY_DIVERT")
    assert (
        divert and divert[0].payload["sam"] == "S1" and divert[0].payload["targets"] == ["T1", "T2"]
    )
    assert divert[0].tick > known  # after the worker's build, not on the tick that learnt it
    # every field built in a worker: the start's SAMs' (a paced check builds it before
    # anything needs it), then S1's
    assert executive.safety.field.in_worker == 2 == executive.safety.field.builds
    assert not executive.safety.deferred


def test_a_divert_paced_is_worked_out_in_a_worker_from_a_checkpoint(monkeypatch):
    """Paced, a drone with room keeps flying while a worker works its divert out from where
    it will be a few ticks on; on that tick the divert is sent from there. No SAM-avoiding
    leg is worked out on the tick's thread; the drone goes round, its targets kept."""
    from executive.loop.divert_ahead import DivertJobs
    from planner.geometry import SamField

    threads: list[str] = []
    real = SamField.shortest_path

    def traced(self, p, q):
        threads.append(threading.current_thread().name)
        return real(self, p, q)

    monkeypatch.setattr(SamField, "shortest_path", traced)
    # a worker a loaded machine starves still has 0.2 s (the guess before a job is measured
    # is 0.05 s: late, the job is dropped and the layer acts on the tick, as it must)
    monkeypatch.setattr(DivertJobs, "lead_s", lambda self: 0.2)
    executive, sink = _left_to_the_layer(line_mission(timeline=[SAM_NEAR]))
    report = asyncio.run(executive.run(50.0, until=45 * 20))  # its checkpoint: 201 ticks on
    _assert_safe(sink, report)
    jobs = executive.safety.diverts
    assert (jobs.started, jobs.sent, jobs.dropped) == (1, 1, 0)
    divert = _events(sink, "SAFETY_DIVERT")
    assert len(divert) == 1 and divert[0].payload["targets"] == ["T1", "T2"]
    assert divert[0].tick > _events(sink, "ENV_EDITS")[0].tick
    sent = [r for r in sink.of(InputRecord) if r.kind == "command" and r.source == "executive"]
    assert [r.tick for r in sent if r.tick > 0] == [divert[0].tick]  # after the first plan
    applied = [r for r in sink.of(EventRecord) if r.kind == "command_applied"]
    assert any(r.tick == divert[0].tick for r in applied)  # it started where the drone was
    assert threads and "MainThread" not in threads


def test_a_divert_job_that_fails_is_said_and_the_layer_acts_on_the_tick(monkeypatch, caplog):
    # The worker's divert raises (here, only off the main thread): counted and logged, the
    # job dropped, and the divert made on the tick as before; the drone still goes round.
    import executive.loop.safety as safety_module

    real = safety_module.divert_route

    def only_on_the_tick(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("the worker's geometry broke")
        return real(*args, **kwargs)

    monkeypatch.setattr(safety_module, "divert_route", only_on_the_tick)
    executive, sink = _left_to_the_layer(line_mission(timeline=[SAM_NEAR]))
    with caplog.at_level("WARNING", logger="executive.loop.safety"):
        report = asyncio.run(executive.run(50.0, until=45 * 20))
    _assert_safe(sink, report)
    jobs = executive.safety.diverts
    assert (jobs.started, jobs.sent, jobs.dropped, jobs.failed) == (1, 0, 1, 1)
    assert "the worker's geometry broke" in caplog.text
    divert = _events(sink, "SAFETY_DIVERT")
    assert len(divert) == 1 and divert[0].payload["targets"] == ["T1", "T2"]


def test_the_flights_near_a_new_sam_are_those_each_flights_own_box_test_names():
    # ``_near`` tests a disk against every flight's box at once (an array kept a tick); it
    # names exactly the drones the per-flight test does, for disks all over the map.
    executive = Executive(
        _three_lines([]),
        planner=_planner(ListSink()),
        sink=ListSink(),
        options=LoopOptions(policy=Policy(batch_iterations=300)),
    )
    rng = np.random.default_rng(7)
    compared = []

    def on_tick(result) -> None:
        if result.tick % 200 != 100:
            return
        safety = executive.safety
        for _ in range(200):
            x, y, r = rng.uniform(-10, 70), rng.uniform(-15, 55), rng.uniform(0.5, 12)
            disks = ((x, y, r),)
            alone = [d for d in safety._airborne() if safety._may_meet(d, disks)]  # noqa: SLF001
            assert safety._near(disks) == alone  # noqa: SLF001
            compared.append(bool(alone))

    executive.watch(on_tick=on_tick)
    asyncio.run(executive.run(None, until=700))
    assert len(compared) > 400 and 0 < sum(compared) < len(compared)


def test_a_divert_worked_out_for_a_flight_replaced_since_is_not_sent():
    """The operator holds the drone while its divert is being worked out: the job is
    dropped on its tick (the drone is no longer on the flight it started from), nothing is
    sent from it, and the drone stays clear."""
    known = int(SAM_NEAR["t"] * 20)
    executive, sink = _left_to_the_layer(line_mission(timeline=[SAM_NEAR]))
    executive.watch(
        on_tick=lambda r: r.tick == known + 3 and executive.command(HumanCommand("HOLD", drone="1"))
    )
    report = asyncio.run(executive.run(50.0, until=45 * 20))
    _assert_safe(sink, report)
    jobs = executive.safety.diverts
    assert (jobs.started, jobs.sent, jobs.dropped) == (1, 0, 1)
    assert _events(sink, "SAFETY_DIVERT") == []
    assert _events(sink, "HOLD")


def _three_lines(popups: list[tuple[float, float, float]]) -> Scenario:
    """Three drones on parallel lines 20 km apart, each from its W to its E airport; each
    ``(t, x, range)`` a SAM popping up at x on every line at t."""
    lines = {"1": 0.0, "2": 20.0, "3": 40.0}
    return line_mission(
        timeline=[
            {"t": t, "op": "add_sam", "id": f"S{d}", "pos": [x, y], "range": r}
            for t, x, r in popups
            for d, y in lines.items()
        ],
        airports=[
            *({"id": f"W{d}", "x": 0, "y": y} for d, y in lines.items()),
            *({"id": f"E{d}", "x": 60, "y": y} for d, y in lines.items()),
        ],
        targets=[
            {"id": f"T{d}", "x": 45, "y": y, "priority": 5, "type": "A"} for d, y in lines.items()
        ],
        drones={
            d: {
                "fuelBudget": 200,
                "home_airport": f"W{d}",
                "end_airport": f"E{d}",
                "accessibleTargets": "ALL",
            }
            for d in lines
        },
    )


def test_sams_known_on_one_tick_divert_each_drone_once():
    # Each SAM known checks again, before the sim steps: a drone's divert was sent once per
    # SAM (9 commands and actions for 3 drones), the flight changing only at the step.
    _, sink, report = _fly(_three_lines([(30, 10.5, 2.0)]))
    _assert_safe(sink, report)
    diverts = _events(sink, "SAFETY_DIVERT")
    assert sorted(r.payload["drone"] for r in diverts) == ["1", "2", "3"]
    assert report.safety_actions == 3
    tick = diverts[0].tick
    sent = [r for r in sink.of(InputRecord) if r.kind == "command" and r.tick == tick]
    assert len(sent) == 3 and {r.payload["drone"] for r in sent} == {"1", "2", "3"}


def test_diverts_paced_are_spread_over_ticks_past_the_ticks_budget(monkeypatch):
    """Paced, one check diverts drones until it has spent its budget; the others, with
    room, are diverted on the next ticks (here the budget is nil: one a tick). All go
    round, none enters."""
    import executive.loop.safety as safety_module
    from executive.loop.divert_ahead import DivertJobs

    monkeypatch.setattr(safety_module, "_ACT_BUDGET_S", 0.0)
    monkeypatch.setattr(DivertJobs, "lead_s", lambda self: 1e9)  # no room for a worker's job
    scenario = _three_lines([(30, 14.0, 3.0)])
    executive, sink = _left_to_the_layer(scenario)
    # at 10x the drones' room (245 ticks) is 1.2 s of wall time for the field's build
    report = asyncio.run(executive.run(10.0, until=40 * 20))
    _assert_safe(sink, report)
    diverts = _events(sink, "SAFETY_DIVERT")
    assert sorted(r.payload["drone"] for r in diverts) == ["1", "2", "3"]
    assert len({r.tick for r in diverts}) == 3  # one a tick


def test_a_pop_up_sam_is_tested_alone_against_the_contact_already_known():
    """When the known world only grew, a flight's first contact is the earlier of the one
    with the SAMs known before and the first with the new ones: the same as testing them
    all again (the drone flies on in review, nobody answering)."""
    from planner.geometry.contact import first_contact

    timeline = [
        {"t": 10, "op": "add_sam", "id": "SA", "pos": [50.0, 0.0], "range": 2.0},
        {"t": 20, "op": "add_sam", "id": "SB", "pos": [30.0, 0.0], "range": 2.0},  # nearer
        {"t": 25, "op": "add_sam", "id": "SC", "pos": [40.0, 0.0], "range": 2.0},  # farther
    ]
    sink = ListSink()
    executive = Executive(
        line_mission(timeline=timeline),
        planner=_planner(sink),
        sink=sink,
        options=LoopOptions(policy=Policy(commit="review", batch_iterations=300)),
    )
    safety = executive.safety
    seen: list[tuple[str | None, str | None, bool]] = []  # (contact, all tested again, grown)

    def on_tick(result) -> None:
        if result.tick in (10 * 20 + 2, 20 * 20 + 2, 25 * 20 + 2):
            contact = safety._contact("1")  # noqa: SLF001
            disks, ids = safety._disks()  # noqa: SLF001
            flight = executive.sim.world.flight("1")
            assert flight is not None
            found = first_contact(flight.path, disks)
            again = None if found is None else ids[found[1]]
            grown = safety._grown is not None  # noqa: SLF001
            seen.append((None if contact is None else contact.sam, again, grown))

    executive.watch(on_tick=on_tick)
    asyncio.run(executive.run(None, until=26 * 20))
    assert seen == [("SA", "SA", True), ("SB", "SB", True), ("SB", "SB", True)]
