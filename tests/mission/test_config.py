"""The run configuration: each role's engine, a replayed run's, the refusals naming the field,
the record with every key masked, and the part the executive's loop receives."""

from __future__ import annotations

import json

import pytest
from pydantic import SecretStr, ValidationError

from agents.engines.spec import EngineSpec
from executive.loop import LoopOptions, Policy
from mission.config import RunConfig


def test_each_role_gets_its_own_engine_or_the_runs():
    config = RunConfig(
        engine="openai",
        model="llama3.1",
        engine_url="http://gpu-box:11434/v1",
        agent_engines={"critic": EngineSpec(engine="anthropic", model="claude-x")},
    )
    table = config.engine_table()
    assert list(table) == ["strategist", "allocator", "critic", "responder"]
    assert table["critic"] == EngineSpec(engine="anthropic", model="claude-x")
    for role in ("strategist", "allocator", "responder"):
        assert table[role] == EngineSpec(
            engine="openai", model="llama3.1", base_url="http://gpu-box:11434/v1"
        )
    assert list(RunConfig(agents=False).engine_table()) == ["responder"]


def test_a_replayed_run_replays_the_planning_roles_and_answers_questions_by_rules():
    config = RunConfig(engine="replay", replay_run="abc")
    assert config.engine_for("allocator").engine == "replay"
    assert config.engine_for("responder") == EngineSpec()
    with pytest.raises(ValidationError, match="answers every role from its trace"):
        RunConfig(engine="replay", replay_run="abc", agent_engines={"critic": EngineSpec()})


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"agent_engines": {"critic": {"engine": "replay"}}}, "replay answers a whole run"),
        ({"agent_engines": {"coordinator": {"engine": "rules"}}}, "coordinator"),
        ({"engine_url": "http://h:1/v1"}, "the rules engine asks no server"),
        ({"engine": "openai", "engine_url": "host:11434"}, "expected http(s)://HOST"),
        ({"agent_engines": {"critic": {"engine": "openai", "key": "x"}}}, "key"),
    ],
)
def test_a_bad_engine_configuration_is_refused_naming_the_field(fields, says):
    with pytest.raises(ValidationError) as info:
        RunConfig(**fields)
    assert says in str(info.value)


def test_the_recorded_configuration_masks_every_key():
    config = RunConfig(
        engine="openai",
        model="m",
        engine_key=SecretStr("sk-default-secret"),
        agent_engines={"critic": EngineSpec(engine="anthropic", api_key=SecretStr("sk-ant-x"))},
    )
    text = json.dumps(config.recorded())
    assert "sk-default-secret" not in text and "sk-ant-x" not in text
    recorded = config.recorded()
    assert recorded["agent_engines"]["critic"]["engine"] == "anthropic"
    assert recorded["agent_engines"]["critic"]["api_key"] == "**********"
    assert RunConfig.model_validate(recorded).agent_engines["critic"].engine == "anthropic"


def test_the_loop_receives_its_policy_its_seed_and_the_configuration_as_recorded():
    policy = Policy(commit="review", fuel_reserve=5.0)
    config = RunConfig(policy=policy, seed=11, labels={"suite": "s"})
    options = config.loop_options()
    assert isinstance(options, LoopOptions)
    assert options.policy == policy and options.seed == 11
    assert options.record() == config.recorded()
    assert options.record()["labels"] == {"suite": "s"}


def test_agents_off_and_cadences_reach_the_loop_checked():
    options = RunConfig(agents_off=("critic",), agent_cadence_s={"allocator": 60.0}).loop_options()
    assert options.agent_roles == ("strategist", "allocator", "critic")
    assert options.agents_off == ("critic",) and options.agent_cadence_s == {"allocator": 60.0}
    # the agents off entirely: nothing to switch, and no cadence to keep
    assert RunConfig(agents=False, agents_off=("critic",)).loop_options().agent_roles == ()
    with pytest.raises(ValidationError, match="the agents are off"):
        RunConfig(agents=False, agent_cadence_s={"critic": 5})
    with pytest.raises(ValidationError, match="mission seconds > 0"):
        RunConfig(agent_cadence_s={"critic": 0})
    with pytest.raises(ValidationError):
        RunConfig(agents_off=("responder",))  # the responder is not of the planning chain
    with pytest.raises(ValidationError, match="unknown agent"):
        LoopOptions(agent_roles=("critic",), agents_off=("pilot",))
