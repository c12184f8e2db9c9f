"""One engine registry: the names, the CLI's choices and help, the run configuration's
validation and ``make_engine`` all derive from ``agents.engines.spec.ENGINES``."""

from __future__ import annotations

import importlib
import re
from typing import get_args

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from agents.engines import ENGINE_NAMES as PACKAGE_NAMES
from agents.engines import make_engine
from agents.engines.spec import (
    ENGINE_NAMES,
    ENGINES,
    LIVE_ENGINES,
    SERVER_ENGINES,
    EngineName,
    EngineSpec,
    parse_agent_engine,
)
from cli.main import build_app
from cli.words import ASK_ENGINES
from executive.errors import ExecutiveError
from mission.config import ENGINES as CONFIG_ENGINES
from mission.config import RunConfig

# the SDKs are imported by one worker only, the one running these (tests/conftest.py)
pytestmark = pytest.mark.xdist_group("sdk")

runner = CliRunner()


def test_every_list_of_names_is_the_registry() -> None:
    assert ENGINE_NAMES == get_args(EngineName) == tuple(ENGINES)
    assert PACKAGE_NAMES == CONFIG_ENGINES == ENGINE_NAMES
    assert ASK_ENGINES == LIVE_ENGINES
    assert set(LIVE_ENGINES) <= set(ENGINE_NAMES) and set(SERVER_ENGINES) <= set(ENGINE_NAMES)


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_each_registered_engine_is_a_loadable_class(name: str) -> None:
    kind = ENGINES[name]  # type: ignore[index]
    cls = getattr(importlib.import_module(kind.module), kind.cls)
    assert getattr(cls, "name", name) == name
    if not kind.server:  # the others need an SDK key; building them is their own tests'
        assert make_engine(name).name == name


def test_an_unknown_engine_names_every_registered_one() -> None:
    with pytest.raises(ExecutiveError) as err:
        make_engine("bogus")
    assert all(n in str(err.value) for n in ENGINE_NAMES)
    with pytest.raises(ValidationError):
        RunConfig.model_validate({"engine": "bogus"})
    for name in ENGINE_NAMES:
        EngineSpec(engine=name)


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_per_role_choice_follows_the_registry(name: str) -> None:
    if name in LIVE_ENGINES:
        role, spec = parse_agent_engine(f"critic={name}")
        assert (role, spec.engine) == ("critic", name)
    else:
        with pytest.raises(ValueError, match="unknown engine"):
            parse_agent_engine(f"critic={name}")
    if name not in SERVER_ENGINES and name in LIVE_ENGINES:
        with pytest.raises(ValueError, match="takes no model"):
            parse_agent_engine(f"critic={name}:m")


def _help(*args: str) -> str:
    out = runner.invoke(build_app(), [*args, "--help"], env={"COLUMNS": "200"}).output
    return re.sub(r"[\s│]+", " ", out)


def test_cli_help_lists_the_registry() -> None:
    run_help, ask_help, fork_help = _help("run"), _help("ask"), _help("fork")
    assert all(n in run_help for n in ENGINE_NAMES)
    assert all(n in ask_help for n in LIVE_ENGINES)
    assert all(n in fork_help for n in LIVE_ENGINES)
    assert "replay" not in fork_help.split("--engine", 1)[1].split("--", 1)[0]
