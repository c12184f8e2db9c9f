"""The clairvoyant reference flown in the sim, and how the eval report names its reference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mission.evaluation.figures import summary
from mission.evaluation.reference import FIRST_PLAN, FULL_KNOWLEDGE, clairvoyant_reference
from planner.scenario import parse_scenario
from planner.scenario.generator import generate_mission
from planner.way_home import HomeCheck
from tests.planner.missions import TIMELINE_SUITE

SPEC = TIMELINE_SUITE


@pytest.mark.parametrize("index", [0, 1, 2])
def test_the_flown_reference_is_at_least_no_replan_and_full_knowledge_and_below_the_bound(index):
    scenario = parse_scenario(generate_mission(SPEC, index).scenario)
    ref = clairvoyant_reference(scenario, seeds=(0,), iterations=300, fly_best=1)
    # it has strictly more information than either, and flies both plans among its own
    assert ref.flown >= ref.flights[FIRST_PLAN]
    assert ref.flown >= ref.flights[FULL_KNOWLEDGE]
    assert any(name.startswith("clairvoyant") for name in ref.flights)  # its own plan flew
    assert ref.planned <= ref.bound + 1e-9
    assert ref.flown <= ref.bound + 1e-9
    assert ref.gap is not None and 0.0 <= ref.gap <= 1.0


def _row(mission, policy, points, bound=None):
    return {
        "run_id": f"{mission}-{policy}",
        "mission": mission,
        "policy": policy,
        "bound": bound,
        "disruption": "lost_drone",
        "points": points,
        "lost_known": 0,
        "lost_unknown": 0,
        "fuel_outs": 0,
        "safety_actions": 0,
        "latencies": [],
    }


def test_shares_are_of_the_clairvoyant_reference_the_best_of_the_reference_flights():
    rows = [
        _row("m1", "auto", 90.0),
        _row("m1", "no-replan", 80.0),
        _row("m1", "full-knowledge-t0", 100.0),  # flies better than the clairvoyant's plan
        _row("m1", "clairvoyant", 95.0, bound=125.0),
        _row("m2", "auto", 50.0),
        _row("m2", "no-replan", 40.0),
        _row("m2", "full-knowledge-t0", 30.0),
        _row("m2", "clairvoyant", 60.0, bound=60.0),
    ]
    figures = {(f["policy"], f["disruption"]): f for f in summary(rows)}
    auto = figures[("auto", "all")]
    assert auto["reference"] == "clairvoyant"
    assert auto["share_mean"] == pytest.approx((0.9 + 50 / 60) / 2)
    assert auto["share_median"] == pytest.approx((0.9 + 50 / 60) / 2)
    assert figures[("clairvoyant", "all")]["bound_gap"] == pytest.approx((0.2 + 0.0) / 2)


def test_a_batch_without_the_clairvoyant_says_its_reference_is_not_an_upper_bound(tmp_path):
    rows = [_row("m1", "auto", 90.0), _row("m1", "full-knowledge-t0", 80.0)]
    figures = {(f["policy"], f["disruption"]): f for f in summary(rows)}
    assert figures[("auto", "all")]["reference"] == "full-knowledge-t0"
    assert figures[("auto", "all")]["share_mean"] == pytest.approx(90 / 80)
    from mission.evaluation.report import eval_report  # matplotlib only here, as in cli.eval

    out = tmp_path / "r.html"
    page = eval_report(rows, out, suite="harder")[out].decode()
    assert "full knowledge at t0 (not an upper bound)" in page
    assert "not an upper bound" in page and "suite <b>harder</b>" in page
    assert "oracle's" not in page


def test_a_batch_without_any_reference_shows_points_and_claims_no_goal(tmp_path):
    rows = [_row("m1", "auto", 90.0), _row("m1", "no-replan", 70.0), _row("m2", "auto", 50.0)]
    figures = {(f["policy"], f["disruption"]): f for f in summary(rows)}
    assert figures[("auto", "all")]["share_mean"] is None
    assert figures[("auto", "all")]["points_mean"] == pytest.approx(70.0)
    from mission.evaluation.report import eval_report  # matplotlib only here, as in cli.eval

    out = tmp_path / "r.html"
    page = eval_report(rows, out, suite="s")[out].decode()
    assert "NOT met" not in page and "no reference run" in page
    assert "<td>70.0</td>" in page  # the points, per policy, where no share can be


def test_the_report_names_the_clairvoyant_reference_and_the_gap_to_the_bound(tmp_path):
    rows = [
        _row("m1", "auto", 90.0),
        _row("m1", "no-replan", 80.0),
        _row("m1", "clairvoyant", 100.0, bound=125.0),
    ]
    from mission.evaluation.report import eval_report  # matplotlib only here, as in cli.eval

    out = Path(tmp_path / "r.html")
    page = eval_report(rows, out, suite="standard")[out].decode()
    assert "of the points of the clairvoyant reference" in page
    assert "reference's gap to the bound" in page and "<td>20.0 %</td>" in page
    assert "Evaluation of suite standard" in page


def test_isr_eval_flies_the_clairvoyant_and_stores_its_bound(tmp_path):
    from executive.traces.reader import TraceReader
    from mission.evaluation import EvalTask, run_one
    from mission.evaluation.figures import run_rows

    path = tmp_path / "m.json"
    path.write_text(json.dumps(generate_mission(SPEC, 0).scenario))
    url = f"sqlite:///{tmp_path / 'e.db'}"
    for policy in ("clairvoyant", "no-replan"):
        run_one(
            EvalTask(
                suite="s",
                mission="m.json",
                path=str(path),
                policy=policy,
                trace_url=url,
                agents=False,
            )
        )
    reader = TraceReader(url)
    rows = {r["policy"]: r for r in run_rows(reader, "s")}
    reader.close()
    assert rows["clairvoyant"]["bound"] >= rows["clairvoyant"]["points"] > 0
    figures = {(f["policy"], f["disruption"]): f for f in summary(list(rows.values()))}
    assert figures[("no-replan", "all")]["reference"] == "clairvoyant"
    assert figures[("no-replan", "all")]["share_mean"] <= 1.0


def test_references_fly_their_plans_on_the_whole_fuel_and_policies_keep_the_reserve():
    from mission.evaluation.policies import EvalTask, config_for

    def policy(name):
        return config_for(EvalTask("s", "m.json", "m.json", name)).policy

    # a reference plan knows what comes: cut by a reserve held for surprises it would score
    # below the policies it is the reference of
    assert policy("clairvoyant").reserve_km([5.0]) == 0.0
    assert policy("clairvoyant").leak_share == 0.0 and not policy("clairvoyant").replan
    # the full-knowledge plan does not know when things happen: it flies as policies do
    assert (
        policy("full-knowledge-t0").reserve == "robust" and not policy("full-knowledge-t0").replan
    )
    assert policy("auto").reserve == policy("no-replan").reserve == "robust"
    # the variant pricing the reserve policy keeps what was kept before it: 1 km, no leak share
    assert policy("auto-fixed-reserve").reserve_km([5.0]) == 1.0
    assert policy("auto-fixed-reserve").leak_share == 0.0 and policy("auto").leak_share > 0
    assert policy("auto-spare").spare_drones == 1 and policy("auto").spare_drones == 0
    # the way-home check is a variant: on corridors with the robust budget, in full with the
    # reserve's SAM part left to it; the fixed reserve (the one kept before) has neither
    assert policy("auto").home_rule is None and policy("auto-fixed-reserve").home_rule is None
    assert policy("auto-home-check").home_rule == HomeCheck(1.0, ends=False)
    assert policy("auto-home-check").reserve_km([5.0]) == policy("auto").reserve_km([5.0])
    assert policy("auto-lean-reserve").home_rule == HomeCheck(1.0, ends=True)
    assert policy("auto-lean-reserve").reserve_km([5.0]) == 1.0


def test_a_flight_that_broke_a_promise_is_never_the_reference():
    from mission.evaluation.reference import Flown

    scenario = parse_scenario(generate_mission(SPEC, 0).scenario)
    dry = Flown(points=10_000.0, fuel_outs=1, lost_known=0, lost=1, seconds=0.0)
    fine = Flown(points=1.0, fuel_outs=0, lost_known=0, lost=0, seconds=0.0)
    ref = clairvoyant_reference(
        scenario,
        seeds=(0,),
        iterations=300,
        fly_best=1,
        known={"no-replan": dry, "full-knowledge-t0": fine},
    )
    assert ref.flights[FIRST_PLAN] == 10_000.0  # shown...
    assert ref.source != FIRST_PLAN and ref.flown < 10_000.0  # ...never the reference
