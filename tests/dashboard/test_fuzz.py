"""The dashboard's API fuzzed from its own OpenAPI document (schemathesis), against a live
mission: once with the control token, once without.

The app runs where it always runs, in the mission's event loop (a real ``MissionHost`` at
10x real time behind a real ``start_dashboard``, from ``harness.live_mission``). Schemathesis
calls it in-process (its ASGI transport, no socket): its client runs the ASGI app in a loop
of its own, so ``LoopBridge`` hands each request over to the mission's loop, where the bus,
the mirror and the futures live, and the messages back (the app's objects are bound to that
loop and are not thread-safe). The cases are generated in a worker thread while the mission
keeps ticking.

Every response must be below 500, of a documented content type and, where a schema is
documented for its status, conform to it. After both runs the mission must still tick and
the app still answer, and the log must hold no traceback. ``fuzz_api`` is shared with
``bench/probe_api.py``, which runs thousands of cases instead of a few per operation.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
)

from sim.pacing import MAX_SPEED
from tests.dashboard.harness import AUTH, TIMEOUT, Frames, live_mission, telemetry

PACE = 10.0  # x real time: the demo flies ~3 minutes, far longer than the fuzzing
EXAMPLES = 12  # per operation and run: ~15 operations x 2 runs stays well under a minute
# Valid bodies and invalid ones (wrong types, missing and extra fields), for every operation.
MODES = (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)
# The 5xx the dashboard answers on purpose: none (a fork on a dashboard that cannot start
# runs is a 409). Kept as the place to name one, counted apart with its body checked.
DELIBERATE_5XX: set[tuple[str, int]] = set()
CHECKS = [not_a_server_error, content_type_conformance, response_schema_conformance]


class LoopBridge:
    """An ASGI app that runs ``app`` in ``loop`` whatever loop calls it.

    The lifespan is answered here and never forwarded: the app's own lifespan already ran
    under its server in ``loop``.
    """

    def __init__(self, app: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.app = app
        self.loop = loop

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        here = asyncio.get_running_loop()

        def over(coro: Any) -> Any:  # run in ``here``, awaited from ``self.loop``
            return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, here))

        async def bridged_receive() -> Any:
            return await over(receive())

        async def bridged_send(message: Any) -> None:
            await over(send(message))

        done = asyncio.run_coroutine_threadsafe(
            self.app(scope, bridged_receive, bridged_send), self.loop
        )
        await asyncio.wrap_future(done)


@dataclass
class FuzzReport:
    """What one fuzzing run saw: cases sent, statuses, and every failure, one line each."""

    cases: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    per_operation: Counter[str] = field(default_factory=Counter)
    by_path: defaultdict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    server_errors: list[str] = field(default_factory=list)
    deliberate: list[str] = field(default_factory=list)  # of DELIBERATE_5XX, kept apart
    failures: list[str] = field(default_factory=list)

    def merge(self, other: FuzzReport) -> FuzzReport:
        self.cases += other.cases
        self.statuses.update(other.statuses)
        self.per_operation.update(other.per_operation)
        for path, statuses in other.by_path.items():
            self.by_path[path].update(statuses)
        self.server_errors += other.server_errors
        self.deliberate += other.deliberate
        self.failures += other.failures
        return self


def _first_line(exc: BaseException) -> str:
    """What failed, in one line: the titles of a FailureGroup's checks, else the message."""
    if isinstance(exc, BaseExceptionGroup):
        titles = [getattr(e, "title", None) or _first_line(e) for e in exc.exceptions]
        return "; ".join(dict.fromkeys(titles))
    for line in str(exc).strip().splitlines():
        if line.strip():
            return line.strip()[:300]
    return type(exc).__name__


def fuzz_api(
    app: Any,
    loop: asyncio.AbstractEventLoop,
    *,
    token: str | None,
    max_examples: int,
    run_id: str | None = None,
    derandomize: bool | None = None,
    pace: float = PACE,
) -> FuzzReport:
    """Every operation of ``app``'s OpenAPI document, ``max_examples`` generated cases each
    of valid and of invalid input, with ``Authorization: Bearer token`` on every request
    when ``token`` is given; with ``run_id``, the operations on one run once more with that
    run (a recorded one: a random id finds none). Blocking: call it from a thread other
    than ``loop``'s."""
    schema = schemathesis.openapi.from_asgi("/openapi.json", LoopBridge(app, loop))
    headers = {"Authorization": f"Bearer {token}"} if token else None
    report = FuzzReport()
    operations = [result.ok() for result in schema.get_all_operations()]
    for operation, mode in itertools.product(operations, MODES):
        if mode is schemathesis.GenerationMode.NEGATIVE and _nothing_to_make_invalid(
            operation.definition.raw
        ):
            continue
        fixed: list[dict[str, Any] | None] = [None]
        if run_id is not None and "{run_id}" in operation.path:
            fixed.append({"run_id": run_id})
        for path_parameters in fixed:
            strategy = operation.as_strategy(
                mode, headers=headers, path_parameters=path_parameters
            ).map(functools.partial(keep_the_pace, pace=pace))
            label = f"{operation.label} ({mode.value}{', the run' if path_parameters else ''})"
            try:
                _fuzz_operation(report, strategy, label, max_examples, derandomize)
            except Unsatisfiable:  # e.g. a string path parameter: every string is valid
                if mode is not schemathesis.GenerationMode.NEGATIVE:
                    raise
    return report


def _nothing_to_make_invalid(raw: dict[str, Any]) -> bool:
    """No body, and no parameter but path strings of any value (``/api/runs/{run_id}``):
    every request is valid, so the invalid mode has no case to send. Hypothesis would spend
    a CPU second per operation looking for one before giving up (Unsatisfiable)."""
    if raw.get("requestBody"):
        return False
    return all(
        p.get("in") == "path"
        and p.get("schema", {}).get("type") == "string"
        and set(p.get("schema", {})) <= {"type", "title", "description"}
        for p in raw.get("parameters") or []
    )


def _fuzz_operation(
    report: FuzzReport, strategy: Any, label: str, max_examples: int, derandomize: bool | None
) -> None:
    """Send ``max_examples`` cases of ``strategy``; every 5xx and failed check in ``report``."""

    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=settings.default.derandomize if derandomize is None else derandomize,
        phases=[Phase.explicit, Phase.generate],  # no shrinking: failures are collected
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def one(case: schemathesis.Case) -> None:
        response = case.call()
        report.cases += 1
        report.per_operation[label] += 1
        report.statuses[response.status_code] += 1
        report.by_path[case.operation.path][response.status_code] += 1
        what = f"{label} -> {response.status_code}: {case.as_curl_command()[:300]}"
        checks = CHECKS
        if (case.operation.path, response.status_code) in DELIBERATE_5XX:
            report.deliberate.append(f"{what}: {response.text[:200]}")
            checks = [c for c in CHECKS if c is not not_a_server_error]
        elif response.status_code >= 500:
            report.server_errors.append(what)
        try:
            case.validate_response(response, checks=checks)
        except (Exception, BaseExceptionGroup) as exc:  # a FailureGroup: the failed checks
            report.failures.append(f"{what}\n    {_first_line(exc)}")

    one()


class _Tracebacks(logging.Handler):
    """Every log record that carries an exception (a traceback in the log)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info is not None:
            self.records.append(f"{record.name}: {record.getMessage()}")


@contextlib.contextmanager
def tracebacks_logged() -> Iterator[list[str]]:
    """The messages of every log record with an exception while inside, on any logger."""
    handler = _Tracebacks()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler.records
    finally:
        root.removeHandler(handler)


def keep_the_pace(case: schemathesis.Case, pace: float = PACE) -> schemathesis.Case:
    """A valid ``/api/speed`` faster than ``pace`` (or null, as fast as possible) made
    ``pace``: the demo would otherwise fly to its end during the fuzzing, and the check that the
    mission still ticks afterwards would have nothing to check. Every other body goes as
    generated, invalid speeds (over ``MAX_SPEED``, strings, booleans) included."""
    body = case.body
    if case.operation.path == "/api/speed" and isinstance(body, dict) and "speed" in body:
        speed = body["speed"]
        number = isinstance(speed, int | float) and not isinstance(speed, bool)
        if speed is None or (number and pace < speed <= MAX_SPEED):
            case.body = {**body, "speed": pace}
    return case


COMMANDING = ("/api/commands", "/api/edits", "/api/speed", "/api/ask")


@dataclass
class LiveFuzz:
    """Both runs against one live mission, and what the mission did afterwards."""

    without_token: FuzzReport
    with_token: FuzzReport
    logged: list[str]  # log records with a traceback, during the whole of it
    ticks: tuple[int, int]  # the tick after the fuzzing, and a later one


async def fuzz_live_mission(
    db: Path, max_examples: int, derandomize: bool | None = None, pace: float = PACE
) -> LiveFuzz:
    """The demo flying at ``pace`` x real time with a trace store in ``db`` (so the runs'
    routes answer), fuzzed without the token then with it; then resumed at ``pace``, and
    watched on the live websocket until it ticks on, flying. (The demo flies for ~2,000
    simulated seconds: at 10x the fuzzing has over 3 minutes.)"""
    from executive.traces import TraceWriter

    url = f"sqlite:///{db}"
    writer = TraceWriter(url)
    writer.start()
    try:
        with tracebacks_logged() as logged:
            async with live_mission(
                speed=pace, trace_sink=writer, trace_url=url, ask_timeout_s=2.0
            ) as mission:
                loop = asyncio.get_running_loop()
                app, token = mission.server.app, mission.server.token
                run_id = mission.executive.run_id
                fuzz = functools.partial(
                    fuzz_api,
                    app,
                    loop,
                    max_examples=max_examples,
                    derandomize=derandomize,
                    pace=pace,
                )
                assert await asyncio.to_thread(writer.flush, TIMEOUT)  # the run is stored
                without = await asyncio.to_thread(fuzz, token=None, run_id=run_id)
                with_token = await asyncio.to_thread(fuzz, token=token, run_id=run_id)
                async with httpx.AsyncClient(base_url=mission.url, timeout=TIMEOUT) as client:
                    for path, body in (
                        ("/api/commands", {"command": "RESUME"}),
                        ("/api/speed", {"speed": pace}),
                        # generated edits mostly name what the world lacks (refused at the
                        # door); one that fits it must still be taken
                        (
                            "/api/edits",
                            {
                                "op": "add_target",
                                "id": "TFUZZ",
                                "x": 50.0,
                                "y": 50.0,
                                "priority": 5,
                                "type": "A",
                            },
                        ),
                    ):
                        sent = await client.post(path, json=body, headers=AUTH)
                        assert sent.status_code == 202, sent.text
                    async with Frames(mission.ws_url) as ws:
                        first = (await ws.until(telemetry(lambda t: True)))["data"]["tick"]
                        later = await ws.until(
                            telemetry(lambda t: t["tick"] > first and t["mode"] != "PAUSED"),
                            what="a later tick, flying",
                        )
                    for path in ("/api/health", "/api/state", f"/api/runs/{run_id}"):
                        answer = await client.get(path)
                        assert answer.status_code == 200 and answer.json(), answer.text
                assert not mission.task.done(), "the mission stopped during the fuzzing"
    finally:
        await asyncio.to_thread(writer.close)
    return LiveFuzz(without, with_token, logged, (first, later["data"]["tick"]))


@pytest.mark.slow
def test_the_api_survives_fuzzing_with_and_without_the_token(tmp_path: Path) -> None:
    done = asyncio.run(fuzz_live_mission(tmp_path / "traces.db", EXAMPLES))
    for report in (done.without_token, done.with_token):
        assert report.server_errors == [], "\n".join(report.server_errors)
        assert report.failures == [], "\n".join(report.failures)
        assert set(COMMANDING) <= {label.split()[1] for label in report.per_operation}
        assert report.cases >= 20 * EXAMPLES, report.per_operation  # ~15 operations x 2 modes
    for line in done.with_token.deliberate + done.without_token.deliberate:
        assert "cannot start runs" in line, line
    # Without the token nothing commanding went through: 401, or the body refused before
    # the token is looked at (FastAPI reads and parses a body before the route's
    # dependencies run: malformed JSON is a 422, an unreadable body a 400, a huge one 413).
    for path in COMMANDING:
        statuses = done.without_token.by_path[path]
        assert set(statuses) <= {401, 400, 413, 422}, (path, statuses)
        assert statuses[401] > sum(statuses.values()) / 2, (path, statuses)
    # With it, commands, edits, speeds and questions were accepted, and bad ones refused.
    took = done.with_token.by_path
    # (edits: the fuzzer's bodies rarely fit the world; fuzz_live_mission posts one that does)
    accepted = [p for p in COMMANDING if p != "/api/edits"]
    assert all(took[path][202] + took[path][200] > 0 for path in accepted), took
    assert all(took[path][422] > 0 for path in COMMANDING), took
    assert done.logged == [], "\n".join(done.logged)
    first, later = done.ticks
    assert later > first
