"""Running a mission from a ``RunConfig``: the one place that puts a run's parts together.

Contract
--------
Options
    ``await run_mission(scenario, config, *, view=None, sink=None, announce=None,
    on_report=None, serve_after=False)``. ``view`` is a ``ViewFactory`` (the dashboard's
    ``start_dashboard``), required when ``config.dashboard`` is set: the executive never
    imports the dashboard, the caller passes it in. ``sink`` is an extra ``TraceSink``
    (a bench's ``ListSink``) that sees every record next to the trace store.
Consumes
    The scenario and the configuration; nothing global.
Produces
    The run's trace (the store at ``config.trace_url``: its run record with the config, its
    inputs, events, plans, agent runs, and a run-end record whatever happens: ``ended``,
    else the final status the bus publishes, ``executive.bus.exits``: Ctrl-C
    ``interrupted``, SIGTERM ``interrupted`` with the signal as ``error``, an error
    ``crashed`` with the reason as ``error``), the bus
    messages of a live run (``config.dashboard`` or ``config.mqtt``), ``announce(line)`` for
    each line a person should read (the dashboard's address), and the ``RunReport``.
Lifecycle
    Returns the report when the mission ends (None if it was cancelled first). With
    ``serve_after`` a live view keeps serving the final state after ``on_report`` has been
    called, until the task is cancelled (Ctrl-C).

``build_planner`` and ``build_executive`` are the same wiring for callers that drive the
executive themselves (tests and benches).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Protocol

from agents.context import MemoryLike
from agents.engines.per_role import planner_engine, responder_engine
from agents.planning.round import AgentPlanner
from agents.words.ask import make_asker
from agents.words.command import coordinate_live
from agents.words.lessons import Lesson, LessonStore, lesson_of, prompt_lines
from executive.bus import Bus, InProcessBus
from executive.bus.exits import close_status
from executive.contracts import MissionPlanner, RunEndRecord, TraceSink
from executive.loop import Executive, RunReport
from executive.traces.fork import ForkPoint, load_fork
from executive.traces.sinks import NullSink, TeeSink, dropped_by, lost_by
from mission.config import ForkConfig, RunConfig
from mission.live.host import BusSink, MissionHost
from mission.live.scene import capture_scene
from planner.clairvoyant import clairvoyant_plan
from planner.model import Scenario
from planner.oracle import oracle_plan

__all__ = [
    "LiveView",
    "ViewFactory",
    "build_executive",
    "build_planner",
    "run_mission",
]


class LiveView(Protocol):
    """A started view of a live run (the dashboard server)."""

    url: str

    async def stop(self) -> None:
        """Stop serving."""
        ...


class ViewFactory(Protocol):
    """Stop serving."""

    def __call__(
        self, bus: Bus, *, host: str, port: int, token: str, trace_url: str | None
    ) -> Awaitable[LiveView]: ...


Memories = Callable[[], Iterable[MemoryLike]]

log = logging.getLogger(__name__)


def build_planner(
    config: RunConfig,
    sink: TraceSink,
    *,
    memories: Memories = lambda: (),
    records: Sequence[dict[str, Any]] | None = None,
) -> MissionPlanner:
    """The planner behind a run: the agent chain on the configured engines (one per role)
    next to the algorithmic baseline, or (agents off) the same round without the chain, so
    operator constraints still hold. ``records`` are the stored answers the replay engine
    gives."""
    engine = planner_engine(config.engine_table(), records=records)
    return AgentPlanner(
        engine,
        sink,
        seed=config.seed,
        iterations=config.search_iterations,
        agent_timeout_s=config.agent_timeout_s,
        memories=memories,
        use_agents=config.agents,
        agent_tools=config.agent_tools,
    )


def build_executive(
    scenario: Scenario,
    config: RunConfig,
    *,
    sink: TraceSink,
    planner: MissionPlanner | None = None,
    memories: Memories = lambda: (),
    records: Sequence[dict[str, Any]] | None = None,
    fork: ForkPoint | None = None,
) -> Executive:
    """An executive for ``scenario`` as ``config`` says (the oracle's plan made first; a
    fork begins at ``fork``), with the coordinator that reads the operator's words."""
    if planner is None:
        planner = build_planner(config, sink, memories=memories, records=records)
    initial = initial_mission = None
    if config.oracle:
        # Planned on the whole timeline, flown in the scripted world as it unfolds.
        initial, initial_mission = oracle_plan(
            scenario, iterations=config.search_iterations or 3000, seed=config.seed
        )
    elif config.clairvoyant:
        # Planned knowing each event and its time (generously: several seeds), flown as is.
        found = clairvoyant_plan(scenario)
        if found is not None:
            initial, initial_mission = found
    return Executive(
        scenario,
        planner=planner,
        # one incremental distance table for the rounds and the rebases
        compile=planner.compile if isinstance(planner, AgentPlanner) else None,
        sink=sink,
        options=config.loop_options(),
        coordinate=coordinate_live,
        initial_plan=initial,
        initial_mission=initial_mission,
        snapshot=capture_scene,  # kept in the traces, so a replay can seek anywhere
        run_id=config.run_id,
        fork=fork,
    )


async def run_mission(
    scenario: Scenario,
    config: RunConfig,
    *,
    view: ViewFactory | None = None,
    sink: TraceSink | None = None,
    announce: Callable[[str], None] | None = None,
    on_report: Callable[[RunReport], None] | None = None,
    serve_after: bool = False,
    on_executive: Callable[[Executive], None] | None = None,
) -> RunReport | None:
    """Run a mission end to end as ``config`` says; see the module's contract.
    ``on_executive`` sees the executive before it starts (a scripted operator watches it)."""
    from executive.errors import ExecutiveError

    if config.dashboard is not None and view is None:
        raise ExecutiveError("a dashboard is configured but no view was given to serve it")
    say = announce or (lambda line: None)
    writer = None
    records = None
    if config.trace_url is not None:
        from executive.traces import TraceReader, TraceWriter

        writer = TraceWriter(config.trace_url, retry_s=config.trace_retry_s)
        writer.start()
        if config.replay_run:
            reader = TraceReader(config.trace_url)
            original = reader.run(config.replay_run)
            records = reader.agent_runs(original["run_id"])
            if config.lessons is None:  # the prompts of the original, lessons included
                lessons = (original.get("config") or {}).get("lessons") or ()
                config = config.model_copy(update={"lessons": tuple(lessons)})
        if config.lessons is None:
            lessons = await asyncio.to_thread(_relevant_lessons, writer.url, scenario)
            config = config.model_copy(update={"lessons": lessons})
    sinks: list[TraceSink] = [s for s in (writer, sink) if s is not None]
    bus: Bus | None = _make_bus(config) if config.live else None
    if bus is not None:
        sinks.append(BusSink(bus, asyncio.get_running_loop()))
    run_sink: TraceSink = TeeSink(*sinks) if sinks else NullSink()
    memories = _memories(config.trace_url, config.lessons or ())
    fork = None
    if config.fork is not None and config.trace_url is not None:
        fork = await asyncio.to_thread(_fork_point, config.trace_url, config.fork)
    executive = build_executive(
        scenario, config, sink=run_sink, memories=memories, records=records, fork=fork
    )
    if on_executive is not None:
        on_executive(executive)
    report = None
    # How a run that stops without ending ends, in the store as on the bus (one rule,
    # executive.bus.exits): Ctrl-C or SIGTERM interrupted (the signal named), an error crashed.
    stopped: tuple[str, dict[str, Any]] = ("interrupted", {})
    try:
        if bus is None:
            report = await executive.run(config.speed)
        else:
            report, stopped = await _run_on_bus(
                executive, bus, config, view, run_sink, memories, say, on_report, serve_after
            )
    except BaseException as exc:
        stopped = close_status(exc)
        raise
    finally:
        if writer is not None:
            outcome = report.to_dict() if report else dict(stopped[1])
            if not report and writer.dropped:  # a stopped run's trace may be short too
                outcome.update(trace_dropped=writer.dropped, trace_lost=writer.loss.summary())
            writer.emit(
                RunEndRecord(
                    executive.run_id,
                    time.time(),
                    "ended" if report else stopped[0],
                    outcome,
                )
            )
            await asyncio.to_thread(writer.close)
            if report is not None:  # what the store refused after the report was made
                report.note_trace_loss(dropped_by(run_sink), lost_by(run_sink))
    if report is not None and config.trace_url and config.learn and not config.replay_run:
        try:  # what this run taught, for the next runs' agents (a replay teaches nothing new)
            lesson = lesson_of(executive.run_id, scenario, report)
            await asyncio.to_thread(_store_lesson, config.trace_url, lesson)
        except ExecutiveError as exc:
            log.warning("the run's lesson was not stored: %s", exc)
            say(f"the run's lesson was not stored: {exc}")
    if report is not None and on_report is not None and bus is None:
        on_report(report)
    return report


def _make_bus(config: RunConfig) -> Bus:
    """The run's bus: MQTT (password, CA file and signing token from ``config``) when a
    broker is configured, else in process."""
    if config.mqtt is None:
        return InProcessBus()
    from executive.bus.mqtt import MqttBus

    return MqttBus(
        config.mqtt,
        role="executive",
        password=config.mqtt_password,
        ca_file=config.mqtt_ca,
        token=config.mqtt_signing_token,
    )


async def _run_on_bus(
    executive: Executive,
    bus: Bus,
    config: RunConfig,
    view: ViewFactory | None,
    sink: TraceSink,
    memories: Memories,
    say: Callable[[str], None],
    on_report: Callable[[RunReport], None] | None,
    serve_after: bool,
) -> tuple[RunReport | None, tuple[str, dict[str, Any]]]:
    """A live run: the mission host on a bus, and the dashboard when configured. With
    ``serve_after`` the view outlives the mission, serving its final state until cancelled.
    Returns the report (None: stopped before the end) and, for a stop, the final status it
    published (``close_status``), for the trace store to say the same."""
    # The question box: coordinator + responder (a replayed run answers with the rules).
    engine = responder_engine(config.engine_table())
    ask = make_asker(engine, sink, memories, responder_tools=config.responder_tools)
    host = MissionHost(executive, bus, ask=ask, trace_url=config.trace_url)
    bus.run_id = executive.run_id
    await bus.start()
    shown = None
    report = None
    stopped: tuple[str, dict[str, Any]] = ("interrupted", {})
    try:
        if config.dashboard is not None and view is not None:
            token = config.dashboard.token.get_secret_value()
            shown = await view(
                bus,
                host=config.dashboard.host,
                port=config.dashboard.port,
                token=token,
                trace_url=config.trace_url,
            )
            if config.show_token:
                say(f"dashboard: {shown.url}/?token={token}")
                say(f"control token: {token}  (Authorization: Bearer TOKEN)")
            else:
                say(f"dashboard: {shown.url}/  (add ?token= and the control token given)")
                say("control token: the one given in the environment (not printed)")
            say(f"run {executive.run_id}; Ctrl-C to stop")
        elif config.mqtt is not None:
            signing = config.mqtt_signing_token
            if signing is not None and config.show_token:
                say(f"control token: {signing.get_secret_value()}  (isr dashboard --token)")
            say(f"run {executive.run_id} on MQTT; Ctrl-C to stop")
        report = await host.run(config.speed)
        if on_report is not None:
            on_report(report)
        if shown is not None and serve_after:
            say("mission over; the dashboard keeps serving until Ctrl-C")
            await asyncio.Event().wait()
    except asyncio.CancelledError as exc:  # Ctrl-C or SIGTERM (interrupted)
        stopped = close_status(exc)
        bus.close_run(stopped[0], **stopped[1])  # unless the mission had ended: it stays ended
    except Exception as exc:  # watchers must not wait on a run that died: say crashed
        state, fields = close_status(exc)
        bus.close_run(state, **fields)
        raise
    finally:
        if shown is not None:
            await shown.stop()
        await bus.stop()
    return report, stopped


def _fork_point(url: str, fork: ForkConfig) -> ForkPoint:
    """Where the fork begins, read from the parent's store (raises ``ExecutiveError``)."""
    from executive.traces import TraceReader

    return load_fork(TraceReader(url), fork.parent, fork.tick)


def _memories(url: str | None, lessons: Iterable[str]) -> Memories:
    """What every agent prompt receives: the store's active memories, then the lessons."""
    lines = prompt_lines(lessons)
    if url is None:
        return lambda: lines
    from agents.words.memory import MemoryStore, WithLessons

    return WithLessons(MemoryStore(url), lines).active


def _relevant_lessons(url: str, scenario: Scenario) -> tuple[str, ...]:
    store = LessonStore(url)
    try:
        return tuple(lesson.text for lesson in store.relevant(scenario))
    finally:
        store.close()


def _store_lesson(url: str, lesson: Lesson) -> None:
    store = LessonStore(url)
    try:
        store.record(lesson)
    finally:
        store.close()
