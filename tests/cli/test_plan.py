"""`isr validate` and `isr plan` as a user runs them: real process, real files; the
strategies' plans and the refused options through the same typer app in this process."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from cli.main import build_app
from tests.conftest import ROOT

ISR = [sys.executable, "-m", "cli"]
APP = build_app()


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([*ISR, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def invoke(*args: str) -> Result:
    """The same command in this process, through the same typer app: where what is checked
    is the app's answer (a plan, a refusal), not the process (a process start costs ~0.6
    CPU s of imports; the tests above and below keep a real process where it matters)."""
    return CliRunner().invoke(APP, list(args))


def test_plan_json_is_one_valid_solution_object(demo_path):
    done = run("plan", str(demo_path), "--json", "--iterations", "3000")
    assert done.returncode == 0, done.stderr
    solution = json.loads(done.stdout)  # exactly one JSON object, nothing else on stdout
    assert set(solution) >= {
        "routes",
        "allocation",
        "sequences",
        "unassigned_targets",
        "total_points",
        "total_fuel",
    }
    assert set(solution["routes"]) == {"1", "2", "3"}
    assert solution["excluded_targets"] == ["T7", "T12"]
    for drone_id, route in solution["routes"].items():
        assert route["feasible"] is True
        assert route["fuel_used"] <= route["fuel_budget"] + 1e-9
        assert (
            route["route"][0] == route["route"][-1] == {"1": "A1", "2": "A2", "3": "A1"}[drone_id]
        )
        path = route["path"]
        assert path[0] == pytest.approx(_pos(demo_path, route["route"][0]))
        assert path[-1] == pytest.approx(_pos(demo_path, route["route"][-1]))
        for x, y in path:  # no point of the flown polyline inside a true SAM disk
            assert math.hypot(x - 35, y - 45) >= 12 - 1e-9
            assert math.hypot(x - 50, y - 55) >= 15 - 1e-9
    assert solution["total_points"] == sum(r["total_points"] for r in solution["routes"].values())


def _pos(demo_path, node_id):
    data = json.loads(Path(demo_path).read_text())["environment"]
    item = next(i for i in data["airports"] + data["targets"] if i["id"] == node_id)
    return [item["x"], item["y"]]


def test_plan_table_and_files(demo_path, tmp_path):
    out, plot = tmp_path / "plan.json", tmp_path / "plan.png"
    done = run(
        "plan", str(demo_path), "--out", str(out), "--plot", str(plot), "--iterations", "2000"
    )
    assert done.returncode == 0, done.stderr
    assert "Total" in done.stdout and "D1" in done.stdout and "Excluded" in done.stdout
    assert json.loads(out.read_text())["total_points"] > 0
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert [p.name for p in tmp_path.iterdir()] != [] and not any(
        p.name.startswith(".") for p in tmp_path.iterdir()
    ), "temporary files left behind"


@pytest.mark.parametrize("strategy", ["efficient", "greedy", "balanced", "geographic", "exclusive"])
def test_every_strategy_plans_the_demo(demo_path, strategy):
    done = invoke("plan", str(demo_path), "--strategy", strategy, "--json")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["total_points"] > 0


def test_search_is_reproducible_with_seed_and_iterations(demo_path):
    a = run("plan", str(demo_path), "--json", "--iterations", "1500", "--seed", "3")
    b = run("plan", str(demo_path), "--json", "--iterations", "1500", "--seed", "3")
    assert a.returncode == b.returncode == 0
    assert json.loads(a.stdout)["sequences"] == json.loads(b.stdout)["sequences"]


def test_bad_scenario_exits_2_with_json_paths_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "environment": {
                    "airports": [{"id": "A1", "x": 0, "y": 0}],
                    "targets": [{"id": "T1", "x": 1, "y": 1, "priority": -1, "type": "A"}],
                },
                "drone_configs": {"1": {"fuelBudget": 10, "home_airport": "A1"}},
            }
        )
    )
    done = run("plan", str(bad))
    assert done.returncode == 2
    assert "$.environment.targets[0].priority" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_malformed_json_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"environment": {"airports": [}')
    done = run("validate", str(bad))
    assert done.returncode == 2
    assert "line 1, column" in done.stderr and "Traceback" not in done.stderr


def test_unwritable_output_is_refused_before_planning(demo_path, tmp_path):
    done = invoke("plan", str(demo_path), "--out", str(tmp_path / "missing" / "plan.json"))
    assert done.exit_code == 2 and "does not exist" in done.stderr, done.output
    done = invoke("plan", str(demo_path), "--plot", str(tmp_path / "plan.txt"))
    assert done.exit_code == 2 and "--plot" in done.stderr, done.output
    assert not (tmp_path / "plan.txt").exists()


def test_unknown_strategy(demo_path):
    done = invoke("plan", str(demo_path), "--strategy", "clever")
    assert done.exit_code == 2 and "choose one of" in done.stderr, done.output
