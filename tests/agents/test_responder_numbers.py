"""A model's answer is checked for numbers, not only ids: the real anthropic SDK against the
local Messages API server answers with numbers the state does not support (999 km of
margin, another drone's margin, every figure of a right answer perturbed), and each such
answer is caught: the rules answer is given instead, the reason is traced and the words
layer warns. A model answer with the state's numbers is passed on."""

from __future__ import annotations

import asyncio
import re

import pytest

from agents import engines as sdk  # SDK engines load on first use (tests/conftest.py)
from agents.responder import respond, responder_rules
from agents.responder.call import NUMBERS_ERROR
from agents.words.ask import answer
from agents.words.state import MissionState, from_executive
from executive.traces.sinks import ListSink
from tests.flown import flown
from tests.messages_api import ToolUse

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

MARGIN = "Which drone has the most fuel margin?"
PERTURBED = [
    MARGIN,
    "Which drone uses the most fuel?",
    "What is the total fuel used?",
    "Why did D2 visit T11 before T2?",
    "Compare D2 and D3",
    "What are the fuel budgets?",
    "Give me the totals",
    "Where is D3?",
]


@pytest.fixture(scope="module")
def state() -> MissionState:
    return from_executive(flown("new_target.json", 4996, iterations=1000))


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for name in ("ISR_ANTHROPIC_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def _respond(api, state, question=MARGIN):
    async def go():
        async with sdk.AnthropicEngine(
            model="claude-test", api_key="sk-test", base_url=api.url
        ) as eng:
            return await respond(question, state, engine=eng, sink=ListSink(), timeout_s=10)

    return asyncio.run(go())


def test_a_model_citing_999_km_of_margin_is_not_passed_on(messages_api, state):
    messages_api.script(
        ToolUse(
            {
                "answer": "D1 has the most fuel margin: 999 km.",
                "numbers": [{"label": "D1 fuel margin", "value": 999, "unit": "km"}],
                "ids": ["D1"],
            }
        )
    )
    done = _respond(messages_api, state)
    assert not done.applied
    assert done.error.startswith(NUMBERS_ERROR) and "999" in done.error
    assert done.output.answer == responder_rules(MARGIN, state)["answer"]
    assert done.record.validated_output["source"] == "rules"
    assert done.record.error == done.error  # traced


def test_another_drones_margin_is_caught_too(messages_api, state):
    d3 = state.drones["3"]
    messages_api.script(
        ToolUse({"answer": f"D1 has the most fuel margin: {d3.margin_km:.1f} km.", "ids": ["D1"]})
    )
    done = _respond(messages_api, state)
    assert not done.applied and "D1 margin" in done.error


def test_a_model_answer_with_the_states_numbers_is_used(messages_api, state):
    d1 = state.drones["1"]
    reply = {
        "answer": f"D1 has the most fuel margin: {d1.margin_km:.1f} km (fuel {d1.fuel:.1f}).",
        "numbers": [{"label": "D1 fuel margin", "value": round(d1.margin_km, 1), "unit": "km"}],
        "ids": ["D1"],
    }
    messages_api.script(ToolUse(reply))
    done = _respond(messages_api, state)
    assert done.applied and done.error is None
    assert done.output.answer == reply["answer"]


def _perturb(text: str) -> str:
    """Every number of ``text`` moved by 7 % (at least 1): a model misreading each figure."""

    def bump(m: re.Match[str]) -> str:
        v = float(m.group(0))
        decimals = len(m.group(0).split(".")[1]) if "." in m.group(0) else 0
        return f"{v + max(1.0, abs(v) * 0.07):.{decimals}f}"

    return re.sub(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?![A-Za-z0-9_])", bump, text)


def test_every_perturbed_answer_is_caught(messages_api, state):
    caught = []
    for question in PERTURBED:
        rules = responder_rules(question, state)
        wrong = _perturb(rules["answer"])
        assert wrong != rules["answer"]
        messages_api.script(ToolUse({"answer": wrong, "ids": rules["ids"]}))
        done = _respond(messages_api, state, question)
        caught.append(not done.applied and done.error.startswith(NUMBERS_ERROR))
    assert all(caught), dict(zip(PERTURBED, caught))


def test_the_words_layer_warns_when_a_model_answer_was_replaced(messages_api, state):
    messages_api.script(ToolUse({"answer": "D1 has 999 km margin.", "ids": ["D1"]}))

    async def go():
        async with sdk.AnthropicEngine(
            model="claude-test", api_key="sk-test", base_url=messages_api.url
        ) as eng:
            return await answer(MARGIN, state, engine=eng, sink=ListSink(), timeout_s=10)

    out = asyncio.run(go())
    assert out["answer"] == responder_rules(MARGIN, state)["answer"]
    assert out["responder"]["applied"] is False
    assert any("999" in w and "rules answer" in w for w in out["warnings"])
    assert 2 <= len(out["follow_ups"]) <= 3


def test_a_why_order_question_gives_the_model_the_route_geometry(messages_api, state):
    question = "Why did D2 visit T11 before T2?"
    rules = responder_rules(question, state)
    messages_api.script(ToolUse({"answer": rules["answer"], "ids": rules["ids"]}))
    done = _respond(messages_api, state, question)
    assert done.applied  # the distances it cites are the state's
    prompt = messages_api.requests[-1]["messages"][0]["content"]
    assert "ROUTE GEOMETRY FOR THIS QUESTION (from the state): " + rules["answer"] in prompt
    d2 = state.drones["2"]
    assert f"(used {d2.budget - d2.fuel:.1f})" in prompt  # fuel used is in the state's text
    assert prompt.endswith(f"OPERATOR QUESTION: {question}")


def test_two_drones_figures_swapped_in_a_comparison_are_caught(messages_api, state):
    question = "Compare D2 and D3"
    rules = responder_rules(question, state)
    d2, d3 = f"{state.drones['2'].fuel:.1f}", f"{state.drones['3'].fuel:.1f}"
    assert d2 != d3 and d2 in rules["answer"] and d3 in rules["answer"]
    swapped = rules["answer"].replace(d2, "\0").replace(d3, d2).replace("\0", d3)
    messages_api.script(ToolUse({"answer": swapped, "ids": rules["ids"]}))
    done = _respond(messages_api, state, question)
    assert not done.applied and done.error.startswith(NUMBERS_ERROR)
    assert f"D2 fuel {d3}" in done.error  # D2's clause states D3's fuel left
