"""Shared fixtures (scenario paths and loaders, a seeded rng), the hypothesis profiles, and
the real parts some tests need.

Tests that talk to a real part carry its marker (``browser``, ``mqtt``, ``postgres``). When
the part is missing the test fails, never skips, with a message saying how to start it:
CI runs every test, so a missing part must show.

The suite runs in parallel (``make test``: pytest-xdist workers), so what a test shares is
per worker: each test process has a Mosquitto of its own (``MQTT``, started on the first
``mqtt`` test), a ``postgres`` test gets a database of its own (``postgres_url``), servers
bind port 0 and files go under ``tmp_path``. Before the workers start, the controller
compiles the numba kernels once into their on-disk cache (``executive.loop.warm``), so on a
fresh clone the workers load them instead of each compiling them again.

The modules whose tests call the anthropic or openai SDK (``pytestmark =
pytest.mark.xdist_group("sdk")``) run on one worker, and import the engines that use them on
first use (``from agents import engines as sdk``): the other workers never import the SDKs.
Those add 166,000 objects to a process (anthropic 120,000), and every paced run in a worker
starts with a full pass of the cyclic collector over all of the worker's objects
(``executive.loop.collector``): four dashboard and safety modules took 16.4 CPU s in a
process that had imported them, 12.7 s in one that had not.

Hypothesis runs derandomised when ``CI`` is set (``.ci/run`` sets it), so a CI run is
repeatable; a developer's run keeps exploring new examples.
"""

from __future__ import annotations

import asyncio
import atexit
import fcntl
import json
import os
import shutil
import signal
import socket
import sqlite3
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import closing
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings

from tests.executive.bus.broker import Mosquitto, free_port
from tests.messages_api import MessagesAPIServer

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"

# No per-example deadline: timings belong in bench/, and a first example that loads numba's
# kernels on a loaded 2-core machine took 0.7 s and failed a test as "flaky".
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

# A suite started in the background by a shell without job control (``.ci/run &``, nohup)
# inherits SIGINT ignored, and so would every ``isr`` child the tests start: their Ctrl-C
# tests would then measure the shell, not the CLI. Give the children a terminal's Ctrl-C.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# This process's own broker (see the module's docstring): its port is chosen now, outside the
# ephemeral range so nothing else takes it meanwhile, and it starts on the first mqtt test.
MQTT = ("127.0.0.1", free_port())
POSTGRES = ("127.0.0.1", 5432)
POSTGRES_ADMIN = "postgresql://postgres@127.0.0.1:5432/test"  # where test databases are made
CHROMIUM = "/usr/bin/chromium"

_HOW_TO_START = {
    "mqtt": "cannot start the suite's MQTT broker (a Mosquitto of its own on 127.0.0.1:"
    f"{MQTT[1]}): install Mosquitto (apt-get install mosquitto; `make test` does it when "
    "run as root)",
    "postgres": "no PostgreSQL on 127.0.0.1:5432: start it "
    "(pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start) with a "
    "'test' database that user postgres may use",
    "browser": "no Chromium for the browser tests: apt-get install chromium "
    "(`make test` installs it when run as root)",
}


@cache
def _listening(address: tuple[str, int]) -> bool:
    try:
        socket.create_connection(address, timeout=1).close()
    except OSError:
        return False
    return True


@cache
def chromium_path() -> str | None:
    """The system's Chromium (Playwright cannot download a browser here)."""
    return CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")


class _SuiteBroker:
    """The Mosquitto of this test process (anonymous, no persistence) on ``MQTT``."""

    def __init__(self) -> None:
        self.broker: Mosquitto | None = None
        self.folder: str | None = None
        self.failed: str | None = None

    def up(self) -> bool:
        if self.broker is None and self.failed is None:
            self.folder = tempfile.mkdtemp(prefix="isr-test-mqtt-")
            self.broker = Mosquitto(Path(self.folder), port=MQTT[1])
            atexit.register(self.stop)  # also when pytest ends without unconfiguring
            try:
                self.broker.start()
            except (OSError, AssertionError) as exc:
                self.failed = str(exc)
        return self.failed is None

    def stop(self) -> None:
        if self.broker is not None:
            self.broker.stop()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


_BROKER = _SuiteBroker()

# The grouped tests of a worker whose xdist could not group them (pytest_collection_finish).
_UNGROUPED: set[str] = set()
_NO_GROUPS = (
    "--dist loadgroup does not group with pytest {} and this pytest-xdist (pytest-xdist#1386):"
    " every worker would build this module's shared fixture; install the pytest that "
    "pyproject.toml allows (make .venv/.installed)"
)


def _available(part: str) -> bool:
    if part == "mqtt":
        return _BROKER.up()
    if part == "postgres":
        return _listening(POSTGRES)
    return chromium_path() is not None


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.nodeid in _UNGROUPED:
        pytest.fail(_NO_GROUPS.format(pytest.__version__), pytrace=False)
    for part in ("mqtt", "postgres", "browser"):
        if item.get_closest_marker(part) is not None and not _available(part):
            why = (
                f" ({_BROKER.failed.splitlines()[0]})" if part == "mqtt" and _BROKER.failed else ""
            )
            pytest.fail(_HOW_TO_START[part] + why, pytrace=False)


def _stray_marks(items: list[pytest.Item]) -> list[str]:
    """Helpers carrying a test's marker (``@pytest.mark.mqtt`` left above a helper put in
    front of its test): the test then runs without its part, failing only when run alone."""
    modules = {id(m): m for i in items if (m := getattr(i, "module", None)) is not None}
    return [
        f"{module.__name__}.{name}"
        for module in modules.values()
        for name, value in vars(module).items()
        if callable(value)
        and not name.startswith("test")
        and getattr(value, "__module__", None) == module.__name__
        and getattr(value, "pytestmark", None)
        and not hasattr(value, "_fixture_function_marker")
        and not isinstance(value, type)
    ]


@pytest.hookimpl(tryfirst=True)  # before xdist's worker reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if stray := _stray_marks(items):
        raise pytest.UsageError(f"a test's marker on a helper, not a test: {', '.join(stray)}")
    # A test module's own module-scoped fixture (a mission flown and stored, a live run) is
    # built once per process that runs its tests: keep those tests on one worker
    # (``--dist loadgroup``), so it is built once, not once per worker. A module in a group
    # of its own choosing (``sdk``, below) is already on one worker.
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        if item.get_closest_marker("xdist_group") is not None:
            continue
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        if any(
            d.scope in ("module", "class") and d.baseid.split("::", 1)[0] == module
            for defs in info.name2fixturedefs.values()
            for d in defs
        ):
            item.add_marker(pytest.mark.xdist_group(module))
    # The slowest tests first (longest first is the classic rule for a short makespan):
    # xdist hands out the groups with the most tests first, then the rest in this order; a
    # 100 s test handed out last made the suite end 27 s after every other worker had.
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_collection_finish(session: pytest.Session) -> None:
    # xdist hands a test's group to its scheduler in the test's node id (``...@group``);
    # with a pytest whose node ids it cannot rewrite (9.2: pytest-xdist#1386) the groups
    # are silently dropped and every worker builds the shared fixtures again (test_fork's
    # flown run four times over). The grouped tests then fail saying so (pytest_runtest_setup).
    if getattr(session.config.option, "loadgroup", False):  # set in loadgroup workers
        grouped = [i.nodeid for i in session.items if i.get_closest_marker("xdist_group")]
        if not any("@" in nodeid for nodeid in grouped):
            _UNGROUPED.update(grouped)


def pytest_configure(config: pytest.Config) -> None:
    # The xdist controller runs no test: it fills numba's on-disk cache before the workers
    # start, so they load the kernels (about a second) instead of each compiling them
    # (about 55 s of CPU each on a fresh clone, all at once on two cores). ``make test`` has
    # filled it already, beside the checks; then this loads them in ~2 s.
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        import subprocess
        import sys

        subprocess.run([sys.executable, "-m", "executive.loop.warm"], cwd=ROOT, check=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    _BROKER.stop()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A SQLAlchemy URL of a database of this test's own on the PostgreSQL server, made here
    and dropped afterwards: parallel workers (and other suites on the server) never share
    tables. Use with the ``postgres`` marker."""
    import psycopg
    from psycopg import sql

    name = f"isr_test_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield f"postgresql+psycopg://postgres@{POSTGRES[0]}:{POSTGRES[1]}/{name}"
    finally:
        with psycopg.connect(POSTGRES_ADMIN, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture
def messages_api() -> Iterator[MessagesAPIServer]:
    """A started local server speaking the Messages API, for the real anthropic SDK; script
    its replies with ``.script(...)``."""
    with MessagesAPIServer() as server:
        yield server


@pytest.fixture
def demo_path() -> Path:
    return SCENARIOS / "demo.json"


@pytest.fixture
def demo_data(demo_path) -> dict:
    return json.loads(demo_path.read_text())


def stored_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, fly: Callable[[str], str]
) -> tuple[Path, str]:
    """(SQLite file, run id) of the run ``fly(url)`` stores (it returns the run's id), flown
    once per test session for every module that asks for ``name``: the session's xdist
    workers share it (the first to ask flies it under a file lock, the others wait for it).
    Nobody writes to it: a module takes a copy of its own (``copy_of``)."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # this session's, shared by its workers (not the previous ones')
    folder = root / f"stored-{name}"
    folder.mkdir(exist_ok=True)
    with (folder / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = folder / "run_id"
        if not done.exists():
            done.write_text(fly(f"sqlite:///{folder / 'traces.db'}"))
        return folder / "traces.db", done.read_text()


def copy_of(run: tuple[Path, str], folder: Path) -> tuple[str, str]:
    """(url, run id) of a copy of ``run``'s store in ``folder`` (SQLite's backup: the WAL's
    pages too), as if the module had flown the run itself."""
    source, run_id = run
    target = folder / "traces.db"
    with closing(sqlite3.connect(source)) as a, closing(sqlite3.connect(target)) as b:
        a.backup(b)
    return f"sqlite:///{target}", run_id


@pytest.fixture(scope="session")
def popup_sam_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(SQLite file, run id) of one finished popup_sam run (a hidden SAM detected mid-flight,
    a replan committed), flown headless in batch with no agents, once per test session
    (``stored_once``); a module takes its copy with ``copy_of``."""
    return stored_once(tmp_path_factory, "popup_sam", _batch_run("popup_sam.json"))


@pytest.fixture(scope="session")
def new_target_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(SQLite file, run id) of one finished new_target run (a target added mid-flight),
    flown headless in batch with no agents, once per test session (``stored_once``); a
    module takes its copy with ``copy_of``."""
    return stored_once(tmp_path_factory, "new_target", _batch_run("new_target.json"))


def _batch_run(name: str) -> Callable[[str], str]:
    """``scenarios/<name>`` flown to its end in batch, no agents, into the store at a URL:
    its run id."""

    def fly(url: str) -> str:
        from mission.config import RunConfig
        from mission.session import run_mission
        from planner.scenario import parse_scenario

        data = json.loads((SCENARIOS / name).read_text())
        config = RunConfig(trace_url=url, agents=False)
        report = asyncio.run(run_mission(parse_scenario(data, name), config))
        assert report is not None
        return report.run_id

    return fly


def short_demo(folder: Path, seconds: float = 300) -> Path:
    """The demo ended by its own ``sim.max_duration`` after ``seconds`` of its 1,695 s, written
    in ``folder``: for a test whose claim is what a run records of its options (its config,
    its engines), which its flight does not change (a run in 0.4 CPU s instead of 1.7)."""
    data = json.loads((SCENARIOS / "demo.json").read_text())
    data["sim"] = {**data.get("sim", {}), "max_duration": seconds}
    path = folder / f"demo-{seconds:g}s.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)
