"""``isr scenario generate`` through the real CLI app: files, manifest, reproducibility, the
suite file, bad input; and a generated mission flies with ``isr run``."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from cli.main import build_app
from planner.scenario import load_scenario
from planner.scenario.generator import SuiteSpec, generate_mission

runner = CliRunner()
app = build_app()


def _generate(out, *args):
    done = runner.invoke(app, ["scenario", "generate", "--out", str(out), *args])
    assert done.exit_code == 0, done.output
    return json.loads((out / "suite.json").read_text())


def test_it_writes_valid_missions_and_a_manifest_reproducibly(tmp_path):
    args = ("--name", "t", "--seed", "5", "--count", "7", "--targets", "10..25", "--drones", "2..4")
    manifest = _generate(tmp_path / "a", *args)
    files = sorted(p.name for p in (tmp_path / "a").glob("t-*.json"))
    assert files == [f"t-{i:04d}.json" for i in range(7)]
    assert [m["file"] for m in manifest["missions"]] == files
    kinds = [m["disruption"] for m in manifest["missions"]]
    assert kinds == list(manifest["spec"]["disruptions"])  # the seven classes, in turn
    for m in manifest["missions"]:
        scenario = load_scenario(tmp_path / "a" / m["file"])
        assert 2 <= len(scenario.drone_configs) <= 4 and 10 <= m["targets"] <= 25
        assert scenario.timeline and m["edits"]
    _generate(tmp_path / "b", *args)
    for name in files + ["suite.json"]:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_yaml_suite_file_and_options_over_it(tmp_path):
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "name: small\nseed: 2\ncount: 3\ntargets: [10, 20]\ndisruptions: [lost_drone]\n"
    )
    manifest = _generate(tmp_path / "out", "--suite", str(suite), "--count", "2")
    assert manifest["spec"]["name"] == "small" and manifest["spec"]["count"] == 2
    assert [m["disruption"] for m in manifest["missions"]] == ["lost_drone", "lost_drone"]


def test_bad_input_is_one_line_naming_it_and_exit_2(tmp_path):
    cases = [
        (["--drones", "8..3"], "drones"),
        (["--drones", "three"], "--drones"),
        (["--disruptions", "popup_sam,meteor"], "disruptions"),
        (["--count", "0"], "count"),
    ]
    for args, needle in cases:
        done = runner.invoke(app, ["scenario", "generate", "--out", str(tmp_path / "x"), *args])
        assert done.exit_code == 2 and needle in done.output, (args, done.output)
        assert "Traceback" not in done.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    done = runner.invoke(
        app, ["scenario", "generate", "--out", str(tmp_path / "y"), "--suite", str(bad)]
    )
    assert done.exit_code == 2 and "not valid YAML (line" in done.output
    unknown = tmp_path / "u.json"
    unknown.write_text(json.dumps({"count": 2, "colour": "red"}))
    done = runner.invoke(
        app, ["scenario", "generate", "--out", str(tmp_path / "z"), "--suite", str(unknown)]
    )
    assert done.exit_code == 2 and "colour" in done.output


def test_a_generated_mission_flies(tmp_path):
    _generate(
        tmp_path,
        "--name",
        "fly",
        "--count",
        "1",
        "--targets",
        "10..15",
        "--disruptions",
        "popup_sam",
    )
    done = runner.invoke(
        app,
        [
            "run",
            str(tmp_path / "fly-0000.json"),
            "--headless",
            "--no-agents",
            "--db",
            "none",
            "--json",
        ],
    )
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["total_points"] > 0 and out["lost"] == []


def test_the_standard_suite_is_whole_and_valid():
    from tests.conftest import SCENARIOS

    folder = SCENARIOS / "suites" / "standard"
    manifest = json.loads((folder / "suite.json").read_text())
    missions = manifest["missions"]
    assert len(missions) >= 200
    counts: dict[str, int] = {}
    for m in missions:
        counts[m["disruption"]] = counts.get(m["disruption"], 0) + 1
        scenario = load_scenario(folder / m["file"])
        assert len(scenario.drone_configs) == m["drones"] and scenario.timeline
    assert set(counts) == set(manifest["spec"]["disruptions"]) and min(counts.values()) >= 25


def test_the_adversarial_suite_is_whole_valid_and_reproducible():
    from tests.conftest import SCENARIOS

    folder = SCENARIOS / "suites" / "adversarial"
    manifest = json.loads((folder / "suite.json").read_text())
    missions = manifest["missions"]
    assert len(missions) == manifest["spec"]["count"] == 24
    kinds = {m["disruption"] for m in missions}
    assert kinds == {"leak_twice", "corridor_closes"}  # each placed somewhere, no fallback out
    for m in missions:
        scenario = load_scenario(folder / m["file"])
        assert len(scenario.drone_configs) == m["drones"]
        ops = [e.op for e in scenario.timeline]
        assert ops == (["set_fuel"] * 2 if m["disruption"] == "leak_twice" else ["add_sam"])
    # The files are what the suite file draws (a change to the generator shows here).
    spec = SuiteSpec.model_validate(
        {
            **manifest["spec"],
            **{k: tuple(manifest["spec"][k]) for k in ("drones", "targets", "sams")},
        }
    )
    for index in (0, 1):
        stored = json.loads((folder / missions[index]["file"]).read_text())
        assert json.loads(json.dumps(generate_mission(spec, index).scenario)) == stored
