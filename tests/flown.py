"""A mission flown to a tick by the executive, as fast as possible, on the algorithmic
planner: the live state the words tests ask questions about."""

from __future__ import annotations

import asyncio

from executive.contracts import TraceSink
from executive.loop import Executive, Policy
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
from mission.config import RunConfig
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS


def flown(
    name: str, until: int, *, iterations: int = 2000, sink: TraceSink | None = None
) -> Executive:
    """``scenarios/<name>`` flown to tick ``until`` (the executive stopped there)."""
    executive = Executive(
        load_scenario(SCENARIOS / name),
        planner=AlgorithmicPlanner(iterations=iterations),
        sink=sink if sink is not None else ListSink(),
        config=RunConfig(policy=Policy()),
    )

    async def go() -> None:
        await executive.start()
        await executive.run(None, until=until)

    asyncio.run(go())
    return executive
