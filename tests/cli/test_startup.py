"""``isr`` imports only the command that runs: checking a file never loads the executive,
the agents, the dashboard, the trace store, Dask, the simulation, the LLM clients, an event
loop or the solvers' scipy (bench/cli_costs.py measures the time)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cli.main import COMMANDS, build_app

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    *("executive", "agents", "mission", "dashboard", "sim", "distributed", "fastapi"),
    *("uvicorn", "sqlalchemy", "anthropic", "openai", "matplotlib", "simpy", "aiomqtt"),
)
# What a check never needs, though a plan does: the allocation's assignment solver, and the
# event loop (only the commands that fly or serve start one: cli.common.run_async).
CHECK_ONLY = ("scipy.optimize", "asyncio")
# A small mission's check runs the geometry as Python (planner._jit): no numba, no LLVM.
SMALL_CHECK_ONLY = ("numba", "llvmlite")

PROBE = """
import json, sys
from cli.main import main
sys.argv = ["isr", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
names = json.loads(sys.stdin.read())
heavy = sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in sys.modules))
print(json.dumps(heavy), file=sys.stderr)
"""


def _loaded(*args: str, among: tuple[str, ...] = HEAVY) -> list[str]:
    """Which of ``among`` (modules, with their submodules) ``isr ARGS`` imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        input=json.dumps(among),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_validate_and_plan_load_no_room_they_do_not_use():
    among = HEAVY + CHECK_ONLY + SMALL_CHECK_ONLY
    assert _loaded("validate", "scenarios/demo.json", among=among) == []
    assert _loaded("plan", "scenarios/demo.json", "--seconds", "0.2") == []


def test_every_command_is_listed_and_loads_by_its_name():
    group = build_app()
    from typer.main import get_command

    cli = get_command(group)
    assert cli.list_commands(None) == list(COMMANDS)  # type: ignore[arg-type]
    for name in COMMANDS:
        command = cli.get_command(None, name)  # type: ignore[arg-type]
        assert command is not None and command.name == name
        assert command.help, f"isr {name} has no help"


# The distance table's work counted in one `isr` process: the SAM field's tables made
# (compile_mission makes one per compile) and full tables filled (the rest are rows).
COUNT = """
import json, sys
from planner.geometry.sam_field import SamField
calls = {"all_pairs": 0, "fill_upper": 0}


def counted(name):
    real = getattr(SamField, name)

    def call(self, *args, **kwargs):
        calls[name] += 1
        return real(self, *args, **kwargs)

    setattr(SamField, name, call)


for name in calls:
    counted(name)
from cli.main import main
sys.argv = ["isr", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps(calls), file=sys.stderr)
"""


def _table_work(*args: str) -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", COUNT, *args], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_plan_compiles_the_mission_once_and_validate_fills_no_table():
    """`isr plan`'s warnings read the rows of the table its plan then fills: one compile,
    one full table; `isr validate` computes only those rows."""
    plan = _table_work("plan", "scenarios/demo.json", "--iterations", "200", "--json")
    assert plan == {"all_pairs": 1, "fill_upper": 1}
    assert _table_work("validate", "scenarios/demo.json") == {"all_pairs": 1, "fill_upper": 0}


EQUAL = """
import json, sys
from planner._jit import run_as_python
assert run_as_python()
from planner.mission import compile_mission
from planner.scenario import load_scenario
mission = compile_mission(load_scenario(sys.argv[1]))
assert "numba" not in sys.modules
print(json.dumps(mission.dist.tolist()))
"""


def test_the_geometry_run_as_python_gives_the_compiled_kernels_distances():
    """The same kernels, interpreted in a process that never loads numba and compiled here:
    every SAM-aware distance of a mission with SAMs between its places is the same."""
    import numpy as np

    from planner.mission import compile_mission
    from planner.scenario import load_scenario

    path = "scenarios/popup_sam.json"
    done = subprocess.run(
        [sys.executable, "-c", EQUAL, path], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    python = np.array(json.loads(done.stdout))
    mission = compile_mission(load_scenario(ROOT / path))
    at = mission.positions
    straight = np.hypot(at[:, None, 0] - at[None, :, 0], at[:, None, 1] - at[None, :, 1])
    assert (mission.dist > straight + 1e-6).any()  # some ways go round a SAM
    assert python.shape == mission.dist.shape
    assert np.allclose(python, mission.dist, rtol=1e-12, atol=1e-9)
