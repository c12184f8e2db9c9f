"""A live mission behind a real dashboard, for the dashboard tests.

``live_mission(...)`` runs a real ``MissionHost(Executive(...))`` on an ``InProcessBus`` with
the algorithmic planner at a real-time pace, and serves it with ``start_dashboard`` on an
ephemeral 127.0.0.1 port (real uvicorn). ``Frames`` reads a real websocket and waits for a
frame that satisfies a condition (never a wall-clock sleep: each frame is the event).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import websockets

from agents.words.command import coordinate_live
from dashboard.process import DashboardProcess
from dashboard.server import DashboardServer, start_dashboard
from executive.bus import InProcessBus
from executive.loop import Executive
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from executive.planning.algorithmic import AlgorithmicPlanner
from executive.traces.sinks import TeeSink
from mission.live.host import BusSink, MissionHost
from planner.scenario import load_scenario
from tests.conftest import ROOT, SCENARIOS

TOKEN = "test-token-0123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
TIMEOUT = 60.0  # generous: the machine is shared and has two cores


def make_asker(sink):
    """The coordinator + responder when they are built; else a tiny real asker."""
    try:
        from agents.engines import make_engine
        from agents.words.ask import make_asker as words_asker
    except ImportError:  # pragma: no cover - before the coordinator existed

        async def ask(text, host, report=None):
            tick = host.executive.sim.tick
            return {"intent": "question", "answer": f"at tick {tick}", "numbers": {"tick": tick}}

        return ask
    return words_asker(make_engine("rules"), sink)


@dataclass
class LiveMission:
    server: DashboardServer | DashboardProcess
    host: MissionHost
    executive: Executive
    bus: InProcessBus
    task: asyncio.Task

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def ws_url(self) -> str:
        return self.server.url.replace("http://", "ws://") + "/ws/live"


@asynccontextmanager
async def live_mission(
    name: str = "demo.json",
    *,
    speed: float | None = 20.0,
    policy: Policy | None = None,
    trace_sink=None,
    trace_url=None,
    ask: bool = True,
    planner=None,
    serve=start_dashboard,
    **app_options,
):
    scenario = load_scenario(SCENARIOS / name)
    bus = InProcessBus()
    loop = asyncio.get_running_loop()
    sink = BusSink(bus, loop)
    if trace_sink is not None:
        sink = TeeSink(trace_sink, sink)
    executive = Executive(
        scenario,
        planner=planner or AlgorithmicPlanner(seed=0),
        sink=sink,
        options=LoopOptions(policy=policy or Policy()),
        coordinate=coordinate_live,  # the console sends words, as session-built runs read them
    )
    host = MissionHost(executive, bus, ask=make_asker(sink) if ask else None)
    # ``serve``: dashboard.process.start_dashboard_process serves from a process of its own
    server = await serve(
        bus, host="127.0.0.1", port=0, token=TOKEN, trace_url=trace_url, **app_options
    )
    task = loop.create_task(host.run(speed), name="mission")
    try:
        yield LiveMission(server, host, executive, bus, task)
    finally:
        executive.stop()
        await asyncio.wait({task}, timeout=TIMEOUT)
        if not task.done():
            task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await server.stop()


def token_protocol(token: str) -> str:
    """The control token as the page offers it on the websocket (a subprotocol)."""
    encoded = base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")
    return f"isr.token.{encoded}"


class Frames:
    """A websocket client of ``/ws/live`` that waits for frames. ``token`` is offered as the
    page offers it (a subprotocol beside ``isr.live``), ``headers`` are sent with the
    handshake (an ``Origin``, an ``Authorization``)."""

    KEPT = ("events", "agents", "status", "plan", "answers")  # remembered, in order

    def __init__(
        self, url: str, *, token: str | None = None, headers: dict[str, str] | None = None
    ) -> None:
        self.url = url
        self.token = token
        self.headers = headers or {}
        self.ws = None
        self.count = 0
        self.seen: list[dict] = []  # frames of the KEPT topics read so far
        self.last_text = ""  # the last frame's text, as received

    async def __aenter__(self) -> Frames:
        protocols = ["isr.live"] + ([token_protocol(self.token)] if self.token else [])
        # An unbounded client queue: this client reads everything (it is the healthy one).
        self.ws = await websockets.connect(
            self.url,
            max_size=None,
            max_queue=None,
            close_timeout=2,
            subprotocols=protocols,
            additional_headers=self.headers,
        )
        return self

    async def __aexit__(self, *exc) -> None:
        await self.ws.close()

    async def next(self) -> dict[str, Any]:
        self.count += 1
        text = await self.ws.recv()
        self.last_text = text
        frame = json.loads(text)
        if frame.get("type") in self.KEPT:
            self.seen.append(frame)
        return frame

    async def until(
        self, condition: Callable[[dict], bool], timeout: float = TIMEOUT, what: str = "a frame"
    ) -> dict[str, Any]:
        """The first frame, already read (of the KEPT topics) or new, that satisfies
        ``condition``."""
        for frame in self.seen:
            if condition(frame):
                return frame

        async def scan():
            while True:
                frame = await self.next()
                if condition(frame):
                    return frame

        try:
            return await asyncio.wait_for(scan(), timeout)
        except TimeoutError:
            raise AssertionError(f"no {what} within {timeout:g} s") from None


def telemetry(condition: Callable[[dict], bool]) -> Callable[[dict], bool]:
    return lambda f: f.get("type") == "telemetry" and condition(f["data"])


def scene(condition: Callable[[dict], bool]) -> Callable[[dict], bool]:
    return lambda f: f.get("type") == "scene" and condition(f["data"])


def event(condition: Callable[[dict], bool]) -> Callable[[dict], bool]:
    return lambda f: f.get("type") == "events" and condition(f["data"])


class CliProcess:
    """The ``isr`` command line with the dashboard plugged in (``cli.dashboard``, the
    project's entry point) in a subprocess; stopped with Ctrl-C (SIGINT) on exit."""

    def __init__(self, *args: str) -> None:
        self.args = [sys.executable, "-m", "cli", *args]
        self.lines: queue.Queue[str] = queue.Queue()
        self.log: list[str] = []
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> CliProcess:
        env = {k: v for k, v in os.environ.items() if k != "ISR_TOKEN"}
        self.proc = subprocess.Popen(
            self.args,
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.log.append(line.rstrip())
            self.lines.put(line)

    def wait_for(self, pattern: str, timeout: float = 120.0) -> str:
        """The first group of the first line (printed on stderr) that matches ``pattern``."""
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(
                    f"{' '.join(self.args[3:])}: no line matching {pattern!r}"
                    f" within {timeout:g} s:\n" + "\n".join(self.log)
                ) from None
            found = re.search(pattern, line)
            if found:
                return found.group(1)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)  # Ctrl-C, as an operator stops it
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
                raise AssertionError("the CLI did not stop on Ctrl-C (SIGINT)") from None
        return self.proc.returncode

    def __exit__(self, *exc) -> None:
        self.stop()
