"""Persistent memories in a real SQLite file: stored, listed, removed, kept across stores,
and injected into the system prompt an engine receives (the anthropic engine through the
real SDK against the local Messages API server)."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import create_engine, inspect

from agents import engines as sdk  # SDK engines load on first use (tests/conftest.py)
from agents.planning.round import AgentPlanner
from agents.words.ask import answer
from agents.words.memory import MEMORY_KINDS, MemoryStore
from agents.words.state import from_executive
from executive.contracts import PlanRequest
from executive.errors import ExecutiveError
from executive.traces.sinks import ListSink
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS
from tests.flown import flown
from tests.messages_api import ToolUse

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

BLOCK = "IMPORTANT MEMORIES & INSTRUCTIONS:"


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'isr.db'}"


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in (
        "ISR_ANTHROPIC_MODEL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def state():
    return from_executive(flown("new_target.json", 100, iterations=500))


def test_memories_are_stored_listed_and_removed_in_the_database(url, tmp_path):
    store = MemoryStore(url)
    added = [store.add(kind, f"{kind} number {i}") for i, kind in enumerate(MEMORY_KINDS)]
    assert [m.kind for m in store.list()] == list(MEMORY_KINDS)
    assert [m.id for m in store.active()] == [m.id for m in added]
    assert all(m.category == m.kind for m in store.active())  # MemoryLike for prompts
    removed = store.remove(added[1].id)
    assert removed.active is False and removed.text == "note number 1"
    store.close()
    # a fresh store on the same file (another process, a later run) sees the same rows
    again = MemoryStore(url)
    assert [m.kind for m in again.active()] == ["instruction", "preference", "warning"]
    assert [m.active for m in again.list(include_removed=True)] == [True, False, True, True]
    # prompts read a cached copy; a store that never caches sees the other's writes at once
    fresh = MemoryStore(url, cache_s=0)
    assert len(fresh.active()) == 3
    store2 = MemoryStore(url)
    store2.add("note", "added elsewhere")
    assert [m.text for m in fresh.active()][-1] == "added elsewhere"
    store2.close()
    fresh.close()
    again.close()
    assert (tmp_path / "isr.db").is_file()
    assert "memories" in inspect(create_engine(url)).get_table_names()


def test_bad_memories_are_clear_errors(url):
    store = MemoryStore(url)
    with pytest.raises(ExecutiveError, match="memory kind 'rule': choose one of instruction"):
        store.add("rule", "x")
    with pytest.raises(ExecutiveError, match="must not be empty"):
        store.add("note", "   ")
    with pytest.raises(ExecutiveError, match="no active memory with id 7"):
        store.remove(7)
    with pytest.raises(ExecutiveError, match="expected a whole number"):
        store.remove("seven")
    m = store.add("NOTE", "  two\nlines  ")  # normalised: one line in a prompt
    assert (m.kind, m.text) == ("note", "two lines")
    store.remove(m.id)
    with pytest.raises(ExecutiveError, match=f"no active memory with id {m.id}"):
        store.remove(m.id)
    store.close()


def _ask(api, text, state, store):
    async def go():
        async with sdk.AnthropicEngine(
            model="claude-test", api_key="sk-test", base_url=api.url
        ) as eng:
            return await answer(text, state, engine=eng, sink=ListSink(), memories=store)

    return asyncio.run(go())


def test_active_memories_reach_the_system_prompt_the_engine_receives(messages_api, url, state):
    store = MemoryStore(url)
    store.add("instruction", "Always use efficient allocation")
    gone = store.add("warning", "Never fly over the lake")
    store.add("warning", "Never use greedy allocation")
    store.remove(gone.id)
    messages_api.script(
        ToolUse({"answer": "D3 has the most margin.", "numbers": [], "ids": ["D3"]})
    )
    out = _ask(messages_api, "Which drone has the most fuel margin?", state, store)
    assert out["responder"]["applied"] is True
    [request] = messages_api.requests
    system = request["system"]
    assert BLOCK in system
    assert "[INSTRUCTION] Always use efficient allocation" in system
    assert "[WARNING] Never use greedy allocation" in system
    assert "Never fly over the lake" not in system  # removed: no longer injected
    assert system.index("HARD CONSTRAINTS") < system.index(BLOCK)
    store.close()


def test_a_memory_said_in_words_is_stored_and_injected_next_time(messages_api, url, state):
    store = MemoryStore(url)
    out = _ask(messages_api, "Remember that D2's camera is unreliable in fog", state, store)
    assert out["intent"] == "memory" and out["applied"] is True
    assert messages_api.requests == []  # storing a memory asks no engine
    [saved] = store.active()
    assert (saved.kind, saved.text) == ("note", "D2's camera is unreliable in fog")
    assert out["memory"]["id"] == saved.id
    messages_api.script(ToolUse({"answer": "ok", "numbers": [], "ids": []}))
    _ask(messages_api, "what is the status of the mission?", state, store)
    assert "[NOTE] D2's camera is unreliable in fog" in messages_api.requests[0]["system"]
    store.close()


class _RulesOnly:
    name = "rules"
    model = None

    async def complete(self, call, *, timeout_s):  # pragma: no cover - never asked
        raise AssertionError("no engine call expected")


def test_without_a_store_a_memory_request_says_it_was_not_stored(state):
    out = asyncio.run(
        answer(
            "always use efficient allocation",
            state,
            engine=_RulesOnly(),
            sink=ListSink(),
            memories=lambda: (),
        )
    )
    assert out["applied"] is False and out["answer"].startswith("Not stored")


def test_the_planning_rounds_prompts_carry_the_stored_memories(messages_api, url):
    """What ``isr run`` wires: ``AgentPlanner(memories=MemoryStore(url).active)``."""
    store = MemoryStore(url)
    store.add("preference", "Prefer balanced workloads")
    scenario = load_scenario(SCENARIOS / "demo.json")

    async def go():
        async with sdk.AnthropicEngine(
            model="claude-test", api_key="sk-test", base_url=messages_api.url
        ) as eng:
            planner = AgentPlanner(eng, ListSink(), iterations=100, memories=store.active)
            outcome = await planner.plan(
                PlanRequest("run-1", "round-1", 0, "initial", scenario, 5.0, parent_run_id="run-1")
            )
            await outcome.followup  # the agents answer after the fast plan: wait for them
            return outcome

    outcome = asyncio.run(go())
    assert outcome.solution is not None  # the engine's empty answers fell back to the baseline
    systems = [r["system"] for r in messages_api.requests]
    assert systems and all("[PREFERENCE] Prefer balanced workloads" in s for s in systems)
    store.close()
