"""A mission flown to a tick by the executive, as fast as possible, on the algorithmic
planner: the live state the words tests ask questions about."""

from __future__ import annotations

import asyncio

from agents.words.command import coordinate_live
from executive.contracts import TraceSink
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import ListSink
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
        options=LoopOptions(policy=Policy()),
        coordinate=coordinate_live,  # the words tests apply words to the live run
    )

    async def go() -> None:
        await executive.start()
        await executive.run(None, until=until)

    asyncio.run(go())
    return executive
