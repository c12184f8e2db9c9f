"""``isr sim`` through typer, as the lead registers it: ``app.command("sim")(sim)``."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from cli.sim import sim
from planner.mission import compile_mission
from planner.planning import plan_mission
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS

app = typer.Typer(add_completion=False)
app.command("sim")(sim)


@app.command("noop")
def _noop() -> None:  # a second command, so "sim" stays a subcommand as in the real CLI
    pass


runner = CliRunner()


@pytest.fixture(scope="module")
def popup_plan(tmp_path_factory):
    scenario = load_scenario(SCENARIOS / "popup_sam.json")
    solution = plan_mission(compile_mission(scenario), "efficient").solution
    path = tmp_path_factory.mktemp("plans") / "plan.json"
    path.write_text(json.dumps(solution.model_dump(mode="json", by_alias=True)))
    return path, solution


def test_json_outcome_is_one_object_with_the_promised_fields(popup_plan):
    plan_path, solution = popup_plan
    done = runner.invoke(
        app, ["sim", str(SCENARIOS / "popup_sam.json"), "--plan", str(plan_path), "--json"]
    )
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    assert set(out) >= {
        "total_points",
        "state_hash",
        "drones",
        "ticks",
        "sim_seconds",
        "wall_seconds",
        "ticks_per_second",
        "lost",
        "events",
    }
    assert set(out["drones"]) == {"1", "2", "3"}
    for drone in out["drones"].values():
        assert set(drone) >= {"status", "fuel_left", "points", "collected"}
    assert out["lost"] and out["total_points"] < solution.total_points
    assert out["total_points"] == sum(d["points"] for d in out["drones"].values())
    assert out["planned_points"] == solution.total_points
    again = json.loads(
        runner.invoke(
            app,
            [
                "sim",
                str(SCENARIOS / "popup_sam.json"),
                "--plan",
                str(plan_path),
                "--json",
                "--speed",
                "max",
            ],
        ).stdout
    )
    assert again["state_hash"] == out["state_hash"]  # deterministic across runs


def test_human_outcome_lists_drones_points_and_rate(popup_plan):
    plan_path, _ = popup_plan
    done = runner.invoke(app, ["sim", str(SCENARIOS / "popup_sam.json"), "--plan", str(plan_path)])
    assert done.exit_code == 0, done.output
    text = done.stdout
    for expected in (
        "Drone",
        "Fuel left",
        "Points:",
        "Drones lost: D",
        "ticks/s",
        "detected SAM SAM3",
    ):
        assert expected in text


def test_it_plans_by_itself_without_a_plan():
    done = runner.invoke(
        app,
        ["sim", str(SCENARIOS / "demo.json"), "--json", "--strategy", "efficient", "--until", "60"],
    )
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    assert out["ticks"] == 1200 and out["sim_seconds"] == pytest.approx(60.0)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--speed", "fast"], "--speed 'fast': expected 'max' or a number from 0.0001 to 10000"),
        (["--speed", "-2"], "--speed '-2': expected 'max' or a number from 0.0001 to 10000"),
        (["--speed", "1e6"], "--speed '1e6': expected 'max' or a number from 0.0001 to 10000"),
        (["--strategy", "magic"], "--strategy 'magic': choose one of"),
    ],
)
def test_bad_options_exit_2_with_one_line(args, message):
    done = runner.invoke(app, ["sim", str(SCENARIOS / "demo.json"), *args])
    assert done.exit_code == 2
    assert message in done.stderr and "Traceback" not in done.output


def test_bad_plan_files_are_named_by_json_path(tmp_path, popup_plan):
    _, solution = popup_plan
    scenario = str(SCENARIOS / "popup_sam.json")
    cases = {}
    cases["missing.json"] = None
    (tmp_path / "broken.json").write_text("{not json")
    cases["broken.json"] = "malformed JSON at line 1"
    data = solution.model_dump(mode="json", by_alias=True)
    data["routes"]["2"]["distance"] = "far"
    (tmp_path / "schema.json").write_text(json.dumps(data))
    cases["schema.json"] = '$.routes["2"].distance: Input should be a valid number'
    data = solution.model_dump(mode="json", by_alias=True)
    data["routes"]["2"]["route"][1] = "T99"
    (tmp_path / "ids.json").write_text(json.dumps(data))
    cases["ids.json"] = "$.routes[\"2\"].route[1]: unknown or excluded id 'T99'"
    data = solution.model_dump(mode="json", by_alias=True)
    data["routes"]["2"]["route"] = ["A2", "T1", "A2"]  # drone 2 cannot sense type A
    (tmp_path / "invalid.json").write_text(json.dumps(data))
    cases["invalid.json"] = "plan violates"
    for name, message in cases.items():
        done = runner.invoke(app, ["sim", scenario, "--plan", str(tmp_path / name)])
        assert done.exit_code == 2, (name, done.output)
        assert "Traceback" not in done.output
        assert f"{tmp_path / name}: " in done.stderr
        assert (message or "$: file not found") in done.stderr


def test_bad_scenario_exits_2_naming_the_path(tmp_path):
    data = json.loads((SCENARIOS / "popup_sam.json").read_text())
    data["timeline"][0]["range"] = -1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    done = runner.invoke(app, ["sim", str(bad)])
    assert done.exit_code == 2
    assert f"{bad}: $.timeline[0].range: Input should be greater than 0, got -1" in done.stderr
