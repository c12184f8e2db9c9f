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
    assert _loaded("validate", "scenarios/demo.json", among=HEAVY + CHECK_ONLY) == []
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
