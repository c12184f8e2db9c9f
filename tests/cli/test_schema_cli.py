"""The mission format from a shell: ``isr schema``, ``isr scenario new``, ``isr validate``
naming every problem and warning, ``isr plan`` and ``isr run`` around a drone that cannot fly.
The real ``isr`` app on real files (in process, as ``tests/cli/test_run.py``; one real
process for the schema a shell redirects); the schema checked by the ``jsonschema`` library."""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from cli.main import build_app
from tests.conftest import ROOT, SCENARIOS

APP = build_app()
SCHEMA_FILE = SCENARIOS / "scenario.schema.json"
DEMO = json.loads((SCENARIOS / "demo.json").read_text())
INTERNALS = ("vehicle 0", "no feasible route", "Traceback", "prefix [")


@dataclass
class Done:
    returncode: int
    stdout: str
    stderr: str


def isr(*args: str) -> Done:
    result = CliRunner().invoke(APP, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Done(result.exit_code, result.stdout, result.stderr)


def _file(tmp_path: Path, data: dict, name: str = "mission.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


# ----- the schema --------------------------------------------------------------------------


def test_the_committed_schema_is_what_isr_schema_prints(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "cli", "schema"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == SCHEMA_FILE.read_text(), (
        "scenarios/scenario.schema.json is stale: isr schema --out scenarios/scenario.schema.json"
    )
    out = tmp_path / "scenario.schema.json"
    assert isr("schema", "--out", str(out)).returncode == 0
    assert out.read_text() == done.stdout


def test_every_scenario_in_the_repository_follows_the_schema():
    validator = _validator()
    files = [
        p
        for p in sorted(SCENARIOS.rglob("*.json"))
        if "environment" in json.loads(p.read_text())  # not the schema, not a suite manifest
    ]
    assert len(files) > 200  # the four demos and the standard suite
    for path in files:
        errors = [
            f"{e.json_path}: {e.message}"
            for e in validator.iter_errors(json.loads(path.read_text()))
        ]
        assert errors == [], path


def test_the_schema_takes_both_position_forms_and_notes_and_refuses_a_typo():
    validator = _validator()
    data = copy.deepcopy(DEMO)
    data["$schema"] = "scenario.schema.json"
    data["drone_configs"]["$comment"] = "three drones"
    data["environment"]["targets"][0] = {"id": "T1", "pos": [25, 35], "priority": 9, "type": "A"}
    data["environment"]["sams"][0] = {"id": "SAM1", "x": 35, "y": 45, "range": 12, "$comment": "a"}
    assert list(validator.iter_errors(data)) == []
    data["drone_configs"]["1"]["fuelBuget"] = 10  # a typo is an error in the editor too
    del data["environment"]["targets"][1]["x"]  # and a target with no position
    paths = sorted(e.json_path for e in validator.iter_errors(data))
    # the target twice: no whole position form, and a y without its x
    assert paths == ["$.drone_configs['1']", "$.environment.targets[1]", "$.environment.targets[1]"]


# ----- isr scenario new ----------------------------------------------------------------------


def test_a_new_scenario_validates_plans_and_links_the_schema(tmp_path):
    out = tmp_path / "mine.json"
    done = isr("scenario", "new", "--drones", "3", "--sams", "2", "--out", str(out))
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert len(data["drone_configs"]) == 3 and len(data["environment"]["sams"]) == 2
    assert "$comment" in data and (out.parent / data["$schema"]).resolve() == SCHEMA_FILE
    assert list(_validator().iter_errors(data)) == []
    checked = isr("validate", str(out))
    assert checked.returncode == 0 and "warning" not in checked.stderr, checked.stderr
    planned = isr("plan", str(out), "--json", "--iterations", "300")
    assert planned.returncode == 0, planned.stderr
    solution = json.loads(planned.stdout)
    assert set(solution["routes"]) == {"1", "2", "3"} and solution["total_points"] > 0


def test_a_new_scenario_on_stdout_and_an_existing_file(tmp_path):
    printed = isr("scenario", "new", "--drones", "1", "--targets", "3", "--sams", "0")
    assert printed.returncode == 0 and json.loads(printed.stdout)["environment"]["sams"] == []
    out = _file(tmp_path, {"keep": True})
    refused = isr("scenario", "new", "--out", str(out))
    assert refused.returncode == 2 and "--force" in refused.stderr
    assert json.loads(out.read_text()) == {"keep": True}
    assert isr("scenario", "new", "--out", str(out), "--force").returncode == 0
    too_many = isr("scenario", "new", "--drones", "0")
    assert too_many.returncode == 2 and "--drones" in too_many.stderr


# ----- isr validate --------------------------------------------------------------------------


def test_validate_names_schema_and_reference_problems_in_one_run(tmp_path):
    data = copy.deepcopy(DEMO)
    data["drone_configs"]["1"]["fuelBudget"] = -5
    data["drone_configs"]["2"]["home_airport"] = "ZZ"
    data["environment"]["sams"][0]["x"] = 1  # disagrees with its pos
    file = _file(tmp_path, data)
    done = isr("validate", str(file))
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert lines == [
        f"error: {file}: $.environment.sams[0]: x and y go together: y is missing",
        f'error: {file}: $.drone_configs["1"].fuelBudget: Input should be greater than or'
        " equal to 0, got -5",
        f"error: {file}: $.drone_configs[\"2\"].home_airport: unknown airport id 'ZZ'",
    ]


def test_validate_warns_naming_the_drone_and_strict_refuses(tmp_path):
    data = copy.deepcopy(DEMO)
    data["drone_configs"]["UAV1"] = data["drone_configs"].pop("1") | {"fuelBudget": 5}
    file = _file(tmp_path, data)
    done = isr("validate", str(file))
    assert done.returncode == 0, done.stderr
    assert "1 warning(s)" in done.stdout
    assert done.stderr.startswith(
        f'warning: {file}: $.drone_configs["UAV1"].fuelBudget: drone UAV1: fuel 5 km cannot'
        " reach any eligible target and return"
    )
    strict = isr("validate", str(file), "--strict")
    assert strict.returncode == 2 and "drone UAV1" in strict.stderr
    clean = isr("validate", str(SCENARIOS / "demo.json"), "--strict")
    assert clean.returncode == 0 and clean.stderr == ""


# ----- isr plan and isr run around a drone that cannot fly ------------------------------------


def _stuck(tmp_path: Path) -> Path:
    """The demo with drone 1's frozen legs beyond its fuel: no route can be planned for it."""
    data = copy.deepcopy(DEMO)
    data["drone_configs"]["1"] |= {"fuelBudget": 5, "frozen_segments": [{"from": "A1", "to": "T8"}]}
    return _file(tmp_path, data, "stuck.json")


def _no_internals(done: Done) -> None:
    for text in INTERNALS:
        assert text not in done.stdout + done.stderr, done.stderr


def test_plan_goes_around_a_drone_that_cannot_fly_and_says_so(tmp_path):
    file = _stuck(tmp_path)
    done = isr("plan", str(file), "--iterations", "300")
    assert done.returncode == 0, done.stderr
    _no_internals(done)
    assert "stays at A1" in done.stdout  # its row in the table, with no route
    assert "drone D1: its frozen legs need 30.4 km of fuel" in done.stderr
    as_json = isr("plan", str(file), "--iterations", "300", "--json")
    solution = json.loads(as_json.stdout)
    assert set(solution["routes"]) == {"2", "3"} and solution["total_points"] > 0
    # The JSON names the drone left out and why, as stderr does; nothing was rerouted.
    assert list(solution["left_out"]) == ["1"] and "rerouted" not in solution
    assert solution["left_out"]["1"].startswith("D1: its frozen legs alone need 30.4 km")


def test_a_plan_file_with_a_drone_left_out_flies_in_isr_sim(tmp_path):
    file = _stuck(tmp_path)
    out = tmp_path / "plan.json"
    done = isr("plan", str(file), "--iterations", "300", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "left_out" in json.loads(out.read_text())
    flown = isr("sim", str(file), "--plan", str(out), "--json")
    assert flown.returncode == 0, flown.stderr
    _no_internals(flown)
    assert "drone D1: its frozen legs need 30.4 km of fuel" in flown.stderr
    outcome = json.loads(flown.stdout)
    assert outcome["drones"]["1"]["points"] == 0 and outcome["total_points"] > 0


def test_sim_plans_around_a_drone_that_cannot_fly_and_warns(tmp_path):
    done = isr("sim", str(_stuck(tmp_path)), "--json")
    assert done.returncode == 0, done.stderr
    _no_internals(done)
    assert done.stderr.startswith(
        f'warning: {tmp_path / "stuck.json"}: $.drone_configs["1"].frozen_segments:'
        " drone D1: its frozen legs need 30.4 km of fuel"
    )
    assert json.loads(done.stdout)["total_points"] > 0
    clean = isr("sim", str(SCENARIOS / "demo.json"), "--json")
    assert clean.returncode == 0 and clean.stderr == ""


def test_plan_ends_a_drone_short_of_fuel_at_an_airport_it_can_reach(tmp_path):
    data = copy.deepcopy(DEMO)
    data["drone_configs"]["1"] |= {"fuelBudget": 5, "end_airport": "A2"}
    done = isr("plan", str(_file(tmp_path, data)), "--iterations", "300", "--json")
    assert done.returncode == 0, done.stderr
    _no_internals(done)
    routes = json.loads(done.stdout)["routes"]
    assert routes["1"]["route"] == ["A1", "A1"] and routes["2"]["visited_targets"]
    assert "drone D1: fuel 5 km cannot reach its end airport A2" in done.stderr
    rerouted = json.loads(done.stdout)["rerouted"]
    assert list(rerouted) == ["1"] and "cannot reach its end airport A2" in rerouted["1"]


@pytest.mark.parametrize("option", ["--no-oracle", "--oracle"])
def test_run_flies_the_rest_of_the_fleet(tmp_path, option):
    done = isr(
        "run", str(_stuck(tmp_path)), "--headless", "--no-agents", "--db", "none", "--json", option
    )
    assert done.returncode == 0, done.stderr
    _no_internals(done)
    assert "drone D1: its frozen legs need 30.4 km of fuel" in done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["drones"]["1"]["status"] == "parked" and out["drones"]["1"]["points"] == 0
    assert out["drones"]["2"]["points"] > 0 and out["drones"]["3"]["points"] > 0


@pytest.mark.parametrize("oracle", [False, True], ids=["planner", "oracle"])
def test_the_executive_records_the_drone_left_out_of_the_first_plan(tmp_path, oracle):
    """A NOT_PLANNED event at tick 0 names the drone and why (the dashboard's event list
    shows it), whoever made the first plan."""
    from executive.config import RunConfig
    from executive.contracts import EventRecord
    from executive.planning.algorithmic import AlgorithmicPlanner
    from executive.session import build_executive
    from executive.traces.sinks import ListSink
    from planner.scenario_io import load_scenario

    sink = ListSink()
    executive = build_executive(
        load_scenario(_stuck(tmp_path)),
        RunConfig(oracle=oracle, iterations=200),
        sink=sink,
        planner=AlgorithmicPlanner(iterations=200),
    )
    asyncio.run(executive.run(None))
    events = [r for r in sink.of(EventRecord) if r.kind == "NOT_PLANNED"]
    assert [(e.tick, e.payload["drone"]) for e in events] == [(0, "1")]
    assert events[0].payload["reason"].startswith("D1: its frozen legs alone need 30.4 km")


def test_the_executives_plain_planner_goes_around_too(tmp_path):
    """``AlgorithmicPlanner`` (the executive's planner without agents, for embedding): the
    drone left out is named, the plan is valid on the mission it hands over."""
    from executive.contracts import PlanRequest
    from executive.planning.algorithmic import AlgorithmicPlanner
    from planner.scenario_io import load_scenario
    from planner.validation import validate_solution

    scenario = load_scenario(_stuck(tmp_path))
    request = PlanRequest("run", "round", 0, "initial", scenario, 1.0)
    outcome = asyncio.run(AlgorithmicPlanner(iterations=200).plan(request))
    assert set(outcome.left_out) == {"1"} and "frozen legs" in outcome.left_out["1"]
    assert set(outcome.solution.routes) == {"2", "3"}
    assert (
        outcome.mission is not None and validate_solution(outcome.mission, outcome.solution) == []
    )


def test_the_schema_carries_the_limits_bounds_and_id_characters():
    from planner.limits import MAX_COORD_KM, MAX_FUEL_KM

    validator = _validator()
    data = copy.deepcopy(DEMO)
    data["environment"]["targets"][0]["x"] = MAX_COORD_KM * 2  # as isr validate refuses them
    data["drone_configs"]["1"]["fuelBudget"] = MAX_FUEL_KM + 1
    data["environment"]["airports"][0]["id"] = "A 1"
    paths = sorted(e.json_path for e in validator.iter_errors(data))
    assert paths == [
        "$.drone_configs['1'].fuelBudget",
        "$.environment.airports[0].id",
        "$.environment.targets[0].x",
    ]


def test_isr_validate_and_the_schema_agree_on_every_position_form(tmp_path):
    """The documented forms on a target, with and without a geo origin, through the real
    ``isr validate``: exit 0 exactly where the schema file says valid (the full matrix of
    forms and kinds is ``tests/planner/test_schema_forms.py``, on the loader itself)."""
    from tests.planner.test_schema_forms import DOCUMENTED, WRONG, _scenario

    validator = _validator()
    forms = {
        **DOCUMENTED,
        "lat alone": WRONG["lat alone"],
        "x, y and lat, lon": WRONG["x, y and lat, lon"],
    }
    for geo in (True, False):
        for name, form in forms.items():
            data = _scenario("target", form, geo)
            path = tmp_path / "form.json"
            path.write_text(json.dumps(data))
            done = isr("validate", str(path))
            assert done.returncode in (0, 2), done.stderr
            assert (done.returncode == 0) == validator.is_valid(data), (name, geo, done.stderr)
