"""``isr ask`` and ``isr memory`` through the real CLI app, on a run that ``isr run ...
--headless --db sqlite:///...`` stored in a real SQLite file."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from cli.main import build_app
from executive.traces import TraceReader
from tests.conftest import SCENARIOS
from tests.messages_api import ToolUse

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

runner = CliRunner()
app = build_app()
QUESTION = "Which drone has the most fuel margin?"


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[str, str]:
    """(db url, run id) of new_target.json flown headless to the end and traced."""
    url = f"sqlite:///{tmp_path_factory.mktemp('cli_words') / 'runs.db'}"
    done = runner.invoke(
        app, ["run", str(SCENARIOS / "new_target.json"), "--headless", "--db", url, "--json"]
    )
    assert done.exit_code == 0, done.output
    return url, json.loads(done.stdout.strip().splitlines()[-1])["run_id"]


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in (
        "ISR_ANTHROPIC_MODEL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


def ask(url: str, *args: str):
    return runner.invoke(app, ["ask", *args, "--db", url])


def _expected_margins(url: str, run_id: str) -> dict[str, tuple[float, float]]:
    """drone -> (margin, fuel) from the stored telemetry and committed plan, independently
    of the code under test: flying drones still have route length minus arc length to go."""
    reader = TraceReader(url)
    try:
        row = reader.last_telemetry(run_id)
        plan = [p for p in reader.plan_versions(run_id) if p["status"] == "committed"][-1]
    finally:
        reader.close()
    out = {}
    for d, t in row["drones"].items():
        remaining = 0.0
        if t["status"] == "flying":
            remaining = plan["solution"]["routes"][d]["distance"] - t["s"]
        out[d] = (t["fuel"] - remaining, t["fuel"])
    return out


def test_ask_names_the_drone_with_the_most_margin_and_its_stored_numbers(stored):
    url, run_id = stored
    margins = _expected_margins(url, run_id)
    best = max(margins, key=lambda d: margins[d][0])
    margin, fuel = margins[best]
    done = ask(url, run_id, QUESTION)
    assert done.exit_code == 0, done.output
    text = done.stdout
    assert text.startswith(
        f"D{best} has the most fuel margin: D{best}: {margin:.1f} km margin (fuel {fuel:.1f},"
    )
    for d, (m, f) in margins.items():  # every drone's numbers are the stored ones
        assert f"D{d}: {m:.1f} km margin (fuel {f:.1f}" in text
    as_json = json.loads(ask(url, run_id, QUESTION, "--json").stdout)
    numbers = {n["label"]: n["value"] for n in as_json["numbers"]}
    assert numbers[f"D{best} fuel margin"] == pytest.approx(margin, abs=1e-3)
    assert numbers[f"D{best} fuel left"] == pytest.approx(fuel, abs=1e-3)
    assert as_json["intent"] == "question" and as_json["run_id"] == run_id


def test_trace_prints_the_chain_and_it_is_stored_under_the_run(stored):
    url, run_id = stored
    done = ask(url, run_id[:6], "what if D3 were lost?", "--trace")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0].startswith("What if D3 were lost:")
    chain = lines[lines.index(next(x for x in lines if x.startswith("agent runs behind"))) + 1 :]
    assert chain[0].startswith("coordinator  engine=rules  model=-")
    assert chain[1].startswith("├─ route_optimizer  engine=algorithmic  model=team_search")
    assert "not applied" in chain[1]
    assert chain[2].startswith("└─ responder  engine=rules") and "  applied" in chain[2]
    for line in chain:
        assert " ms  tokens=" in line
    ids = [line.rsplit("id=", 1)[1].split()[0] for line in chain]
    reader = TraceReader(url)
    try:
        rows = {r["run_id"]: r for r in reader.agent_runs(run_id)}
    finally:
        reader.close()
    assert set(ids) <= set(rows)  # stored in the trace DB under the mission run
    assert rows[ids[1]]["parent_run_id"] == ids[0] == rows[ids[2]]["parent_run_id"]
    assert rows[ids[0]]["agent"] == "coordinator"
    assert rows[ids[0]]["validated_output"]["what_if"] == [{"kind": "lose_drone", "drone": "3"}]


def test_ask_tools_traces_each_call_under_the_responder(stored):
    url, run_id = stored
    done = ask(url, run_id, "How much fuel does D2 have left?", "--tools", "--trace")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    chain = lines[lines.index(next(x for x in lines if x.startswith("agent runs behind"))) + 1 :]
    assert chain[0].startswith("coordinator  engine=rules")
    assert chain[1].startswith("└─ responder  engine=rules")
    # the rules engine's tool plan: the overview, then the drone the question names
    assert chain[2].strip().startswith("├─ tool:mission_overview  engine=tools")
    assert chain[3].strip().startswith("└─ tool:drone_state  engine=tools")
    assert all("  applied" in line for line in chain[2:4])


def test_ask_with_the_anthropic_engine_and_stored_memories(stored, messages_api, monkeypatch):
    url, run_id = stored
    done = runner.invoke(
        app, ["memory", "add", "warning", "Never use greedy allocation", "--db", url]
    )
    assert done.exit_code == 0 and done.stdout.startswith("stored warning #")
    memory_id = done.stdout.split("#", 1)[1].split(":", 1)[0]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", messages_api.url)
    messages_api.script(
        ToolUse(
            {
                "answer": "D1 has the most fuel margin: 200.0 km.",
                "numbers": [{"label": "D1 fuel margin", "value": 200.0}],
                "ids": ["D1"],
            },
            usage=(1234, 56),
        )
    )
    done = runner.invoke(
        app,
        [
            "ask",
            run_id,
            QUESTION,
            "--db",
            url,
            "--engine",
            "anthropic",
            "--model",
            "claude-test",
            "--trace",
        ],
    )
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("D1 has the most fuel margin: 200.0 km.")
    assert "responder  engine=anthropic  model=claude-test" in done.stdout
    assert "tokens=1234/56  applied" in done.stdout
    [request] = messages_api.requests
    assert "[WARNING] Never use greedy allocation" in request["system"]
    assert f"MISSION STATE (stored run {run_id}" in request["messages"][0]["content"]
    runner.invoke(app, ["memory", "rm", memory_id, "--db", url])


@pytest.mark.parametrize(
    "args, needle",
    [
        (["nosuchrun", QUESTION], "no run 'nosuchrun'"),
        (["{run}", "where is D9?"], "unknown drone D9"),
        (["{run}", QUESTION, "--engine", "gpt"], "--engine 'gpt'"),
        (["{run}", QUESTION, "--engine", "anthropic"], "needs an API key"),
    ],
)
def test_ask_errors_are_one_clear_line_and_exit_2(stored, args, needle):
    url, run_id = stored
    done = ask(url, *[a.replace("{run}", run_id) for a in args])
    assert done.exit_code == 2, done.output
    assert needle in done.output and "Traceback" not in done.output
    assert len([x for x in done.output.splitlines() if x.strip()]) == 1


def test_ask_on_a_missing_store_does_not_create_one(tmp_path):
    db = tmp_path / "nothing.db"
    done = runner.invoke(app, ["ask", "abcd", QUESTION, "--db", f"sqlite:///{db}"])
    assert done.exit_code == 2 and "no trace store" in done.output
    assert not db.exists()


def test_memory_add_list_rm(tmp_path):
    url = f"sqlite:///{tmp_path / 'mem.db'}"

    def mem(*args):
        return runner.invoke(app, ["memory", *args, "--db", url])

    assert mem("list").stdout.strip() == "no memories"
    assert mem("add", "instruction", "Always use efficient allocation").exit_code == 0
    assert mem("add", "note", "Last mission had 29 targets").exit_code == 0
    listed = mem("list").stdout.splitlines()
    assert listed == [
        "#1  [INSTRUCTION]  Always use efficient allocation",
        "#2  [NOTE]  Last mission had 29 targets",
    ]
    assert mem("rm", "1").stdout.startswith("removed instruction #1")
    assert [m["id"] for m in json.loads(mem("list", "--json").stdout)] == [2]
    assert "(removed)" in mem("list", "--all").stdout
    for args, needle in (
        (["add", "rule", "x"], "memory kind 'rule'"),
        (["rm", "1"], "no active memory with id 1"),
        (["rm", "x1"], "memory id 'x1': expected a whole number"),
        (["add", "note", " "], "must not be empty"),
    ):
        done = mem(*args)
        assert done.exit_code == 2, (args, done.output)
        assert needle in done.output and "Traceback" not in done.output


# ----------------------------------------------------------------------------- issue 16


def test_fuel_used_is_answered_with_the_stored_figures_and_follow_ups(stored):
    url, run_id = stored
    reader = TraceReader(url)
    try:
        row = reader.last_telemetry(run_id)
        budgets = {
            d: c["fuelBudget"] for d, c in reader.run(run_id)["scenario"]["drone_configs"].items()
        }
    finally:
        reader.close()
    used = {f"D{d}": budgets[d] - t["fuel"] for d, t in row["drones"].items()}
    top = max(used, key=used.get)
    done = ask(url, run_id, "Which drone uses the most fuel?")
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{top} uses the most fuel: {top}: {used[top]:.1f} km used")
    nxt = lines.index("You could ask next:")
    suggested = [x.strip() for x in lines[nxt + 1 :] if x.strip()]
    assert 2 <= len(suggested) <= 3
    as_json = json.loads(ask(url, run_id, "Which drone uses the most fuel?", "--json").stdout)
    assert as_json["follow_ups"] == suggested
    total = json.loads(ask(url, run_id, "What is the total fuel used?", "--json").stdout)
    assert total["answer"].startswith(f"Total fuel used: {sum(used.values()):.1f} km")


def test_what_ifs_on_a_finished_run_are_planned_from_its_start(stored):
    url, run_id = stored
    done = ask(url, run_id, "what if SAM1 were removed?", "--json")
    assert done.exit_code == 0, done.output
    out = json.loads(done.stdout)
    assert out["what_if"]["from_start"] is True
    assert out["what_if"]["current"]["points"] > 0  # the plan the run started with, not 0
    assert "T7" in out["what_if"]["diff"]["gained"]
    budget = json.loads(
        ask(url, run_id, "What if we increase D1's fuel budget to 300?", "--json").stdout
    )
    assert budget["what_if"]["changes"][0]["kind"] == "set_budget"
    assert "D1 fuel budget from the start 300.0 km" in budget["answer"]


def test_a_what_if_that_grounds_a_drone_exits_0_in_the_missions_words(stored):
    url, run_id = stored
    done = ask(url, run_id, "What if D2 had 5 fuel?")
    assert done.exit_code == 0, done.output
    assert done.stdout.startswith("What if D2 had 5 km of fuel:")
    for internal in ("vehicle", "no feasible route", "Traceback"):
        assert internal not in done.output


def test_ask_stream_prints_each_stage_then_the_same_answer(stored):
    """``--stream``: the decision, the responder's step and the answer, in that order, and
    the answer is the one ``isr ask`` prints without it; ``--json`` gives one line per
    stage before the answer's object."""
    url, run_id = stored
    plain = ask(url, run_id, QUESTION)
    streamed = ask(url, run_id, QUESTION, "--stream")
    assert streamed.exit_code == 0, streamed.output
    lines = streamed.stdout.splitlines()
    assert lines[0] == "> plan: question", lines
    assert lines[1].startswith("> thinking: answering from the mission state at tick ")
    assert lines[2] == "> responder..."
    assert lines[3].startswith("> responder: done (")
    assert "\n".join(lines[4:]) == plain.stdout.rstrip("\n")  # the answer and follow-ups
    rows = [
        json.loads(line)
        for line in ask(url, run_id, QUESTION, "--stream", "--json").stdout.splitlines()
    ]
    events = [r.get("event") for r in rows[:-1]]
    assert events[:4] == ["plan", "thinking", "tool_call_start", "tool_call_end"]
    assert set(events[4:]) == {"message"}
    assert "".join(r["delta"] for r in rows[4:-1]) == rows[-1]["answer"]
