"""``isr edit``, ``isr command`` and ``isr ask --url/--mqtt``: acting on a live run from a
shell, through its dashboard's HTTP API or through the MQTT broker that carries it.

    isr edit RUN '{"op": "add_sam", "id": "S9", "pos": [50, 50], "range": 5}'
    isr command RUN PAUSE | RESUME | CUT | REPLAN | RESET | ACCEPT | REJECT [--text WORDS]
    isr command RUN RETURN 2 | HOLD 2 | RESUME 2    (one drone: home, hold here, fly on)
    isr command RUN AGENT_OFF critic | AGENT_ON critic   (one agent of the planning chain)
    isr command RUN SPEED 5            (K x real time; SPEED max: as fast as possible)
    isr ask RUN "Which drone has the most fuel left?" --url http://127.0.0.1:8000

The way in is the dashboard at ``--url`` (default ``http://127.0.0.1:8000``; the address
``isr run`` prints, ``?token=...`` included, is accepted as it is), or with ``--mqtt
mqtt://HOST:PORT`` (``HOST:PORT`` alone means ``mqtt://``) the broker, signed with the
run's control token (``executive.bus.signing``) as ``isr dashboard --mqtt`` does. The token
is ``--token``, else ``$ISR_TOKEN``, else the one in the URL. ``RUN`` is the run's id (a
unique prefix over HTTP): the run the dashboard serves, or one with a status on the broker.

An edit is checked before it is sent: its form (``planner.edits``), then its ids against
the run's known world with the rule the simulation applies (``sim.edit_check``; the
dashboard's door says it over HTTP, this command over MQTT from the retained scene).
Exit codes: 0 sent (an answer printed for ``ask``); 2 refused: bad input, an edit or
command the run refuses (its 4xx reason printed, with the field), a wrong token, an unknown
run, a run that is over; 1 the run cannot be reached (no dashboard there, no broker, no
answer in time, the link down). ``--json`` prints the answer as one JSON object. Never a
traceback.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import parse_qs, urlsplit

import typer

from agents.engines.spec import PLANNING_ROLES
from cli.common import EXIT_BAD_INPUT, EXIT_FAILED, TOKEN_ENV, fail, shown
from executive.bus.messages import (
    AskMessage,
    CmdMessage,
    CommandMessage,
    EditMessage,
    SpeedMessage,
    new_command_id,
)
from executive.contracts import AGENT_COMMANDS, DRONE_COMMANDS, HUMAN_COMMANDS

__all__ = ["DEFAULT_URL", "LiveError", "ask_live", "command", "edit"]

DEFAULT_URL = "http://127.0.0.1:8000"
_ASK_WAIT_S = 60.0  # a question: the dashboard's own bound (30 s by default) and some
_WAIT_S = 10.0  # anything else: connect, send, answer


class LiveError(Exception):
    """Why acting on the live run failed, with the exit code to leave with."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.code = code


UrlOption = Annotated[
    str | None,
    typer.Option(help=f"the run's dashboard [default: {DEFAULT_URL}]; ?token=... is read too"),
]
MqttOption = Annotated[
    str | None,
    typer.Option(help="instead of a dashboard, the broker carrying the run: mqtt://HOST[:PORT]"),
]
LiveTokenOption = Annotated[
    str | None,
    typer.Option(help=f"the run's control token [default: ${TOKEN_ENV}, or the URL's ?token=]"),
]
JsonOption = Annotated[bool, typer.Option("--json", help="print the answer as one JSON object")]


# ----- the commands ------------------------------------------------------------------------


def edit(
    run: Annotated[str, typer.Argument(help="the live run's id (or a unique prefix)")],
    change: Annotated[
        str, typer.Argument(help='the edit as JSON, e.g. \'{"op": "remove_sam", "id": "S1"}\'')
    ],
    url: UrlOption = None,
    mqtt: MqttOption = None,
    token: LiveTokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """Send one environment edit to a live run; it takes effect at the next tick."""
    raw = _edit_json(change)
    _run(_link(url, mqtt, token), run, as_json, lambda link: link.edit(raw))


def command(
    run: Annotated[str, typer.Argument(help="the live run's id (or a unique prefix)")],
    name: Annotated[
        str, typer.Argument(help=f"{', '.join(HUMAN_COMMANDS)} or SPEED", metavar="COMMAND")
    ],
    value: Annotated[
        str | None,
        typer.Argument(
            help="SPEED's value (K times real time, or max); the drone of RETURN and HOLD"
            " (and of RESUME for one held drone), e.g. 2 or D2; the agent of AGENT_OFF and"
            f" AGENT_ON ({', '.join(PLANNING_ROLES)})"
        ),
    ] = None,
    text: Annotated[
        str | None, typer.Option(help="the operator's words, for CUT and REPLAN")
    ] = None,
    url: UrlOption = None,
    mqtt: MqttOption = None,
    token: LiveTokenOption = None,
    as_json: JsonOption = False,
) -> None:
    """Send a command to a live run (PAUSE, RESUME, CUT, REPLAN, RESET, ACCEPT, REJECT), to
    one of its drones (RETURN D, HOLD D, RESUME D), switch an agent of the planning chain
    off or on (AGENT_OFF ROLE, AGENT_ON ROLE), or set its pace (SPEED K | max)."""
    kind = name.upper()
    if kind == "SPEED":
        if value is None:
            raise fail("SPEED needs a value: K times real time, or max")
        if text is not None:
            raise fail("--text goes with CUT and REPLAN, not SPEED")
        pace = _speed(value)
        _run(_link(url, mqtt, token), run, as_json, lambda link: link.speed(pace))
        return
    if kind not in HUMAN_COMMANDS:
        raise fail(f"command {name!r}: choose one of {', '.join(HUMAN_COMMANDS)} or SPEED")
    if kind in AGENT_COMMANDS:  # the agent's role goes as the command's text
        if value is None or value.strip().lower() not in PLANNING_ROLES or text is not None:
            raise fail(
                f"{kind} needs one agent: {kind} ROLE, ROLE one of {', '.join(PLANNING_ROLES)}"
            )
        role = value.strip().lower()
        _run(_link(url, mqtt, token), run, as_json, lambda link: link.command(kind, role, None))
        return
    if kind in DRONE_COMMANDS and value is None:
        raise fail(f"{kind} needs the drone's id, e.g. isr command RUN {kind} 2")
    if value is not None and kind not in (*DRONE_COMMANDS, "RESUME"):
        raise fail(
            f"{kind} takes no value (only SPEED and a drone's command do); words go in --text"
        )
    if text is not None and kind not in ("CUT", "REPLAN"):
        raise fail(f"--text goes with CUT and REPLAN, not {kind}")
    drone = None if value is None else re.sub(r"^[Dd](\d+)$", r"\1", value.strip())
    _run(_link(url, mqtt, token), run, as_json, lambda link: link.command(kind, text, drone))


def ask_live(
    run: str,
    question: str,
    *,
    url: str | None,
    mqtt: str | None,
    token: str | None,
    timeout: float,
    as_json: bool,
) -> None:
    """``isr ask RUN QUESTION --url/--mqtt``: the live run's coordinator answers."""
    _run(_link(url, mqtt, token), run, as_json, lambda link: link.ask(question, timeout))


# ----- the two ways in ---------------------------------------------------------------------


class _Http:
    """The run's dashboard: its REST API, with the token as a bearer."""

    def __init__(self, url: str, token: str) -> None:
        self.url = url.rstrip("/")
        self.token = token

    async def open(self, run: str) -> str:
        state = await asyncio.to_thread(self._call, "GET", "/api/state", None, _WAIT_S)
        serving = state.get("run_id")
        if not serving:
            raise LiveError(f"the dashboard at {self.url} serves no live run (yet)")
        if not str(serving).startswith(run):
            raise LiveError(
                f"unknown run {run!r}: the dashboard at {self.url} serves run {serving}"
            )
        return str(serving)

    async def close(self) -> None:
        return None

    async def edit(self, raw: dict[str, Any]) -> dict[str, Any]:
        return await self._post("/api/edits", raw)

    async def command(self, kind: str, text: str | None, drone: str | None) -> dict[str, Any]:
        body = {"command": kind, **({"text": text} if text else {})}
        if drone is not None:
            body["drone"] = drone
        return await self._post("/api/commands", body)

    async def speed(self, pace: float | None) -> dict[str, Any]:
        return await self._post("/api/speed", {"speed": pace})

    async def ask(self, question: str, timeout: float) -> dict[str, Any]:
        return await asyncio.to_thread(
            self._call, "POST", "/api/ask", {"question": question}, timeout + _WAIT_S
        )

    async def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(self._call, "POST", path, body, _WAIT_S)

    def _call(
        self, method: str, path: str, body: dict[str, Any] | None, timeout: float
    ) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return _json_object(response.read())
        except urllib.error.HTTPError as exc:
            raise _refusal(exc.code, exc.read(), f"{method} {path}") from None
        except (urllib.error.URLError, OSError) as exc:
            why = getattr(exc, "reason", exc)
            raise LiveError(
                f"cannot reach the dashboard at {self.url}: {why} (is the run's dashboard up?"
                " give its address with --url)",
                EXIT_FAILED,
            ) from None


class _Mqtt:
    """The broker carrying the run: commands signed on ``isr/<run>/cmd``, the run's retained
    status and scene read first (a run over or unknown is refused before anything is sent)."""

    def __init__(self, url: str, token: str) -> None:
        from executive.bus.mqtt import MqttBus

        self.url = url
        self.token = token
        self.bus: MqttBus | None = None
        self.scene: dict[str, Any] | None = None
        self._answers: Any = None

    async def open(self, run: str) -> str:
        from executive.bus.mqtt import MqttBus
        from executive.errors import ExecutiveError

        try:
            bus = MqttBus(self.url, run_id=run, role="watcher", token=self.token)
        except ExecutiveError as exc:
            raise LiveError(str(exc)) from None
        self.bus = bus
        sub = bus.subscribe(("status", "scene", "answers"), maxsize=64)
        self._answers = sub
        try:
            await bus.start()
        except ExecutiveError as exc:
            raise LiveError(str(exc), EXIT_FAILED) from None
        status = None
        try:
            async with asyncio.timeout(_WAIT_S / 2):
                async for message in sub:
                    if message.topic == "scene":
                        self.scene = message.payload
                    elif message.topic == "status":
                        status = message.payload
                    if status is not None and self.scene is not None:
                        break
        except TimeoutError:
            pass
        if status is None:
            refused = sum(bus.refused.values())
            raise LiveError(
                f"unknown run {run!r}: no status of it on the MQTT broker at {bus.url}"
                + (f" ({refused} message(s) not signed with this token)" if refused else "")
            )
        state = status.get("state")
        if state not in ("starting", "running"):
            raise LiveError(f"run {run} has {state}: there is no live mission to act on")
        return run

    async def close(self) -> None:
        if self.bus is not None:
            await self.bus.stop()

    async def edit(self, raw: dict[str, Any]) -> dict[str, Any]:
        from pydantic import ValidationError

        from dashboard.edit_door import world_of_scene
        from dashboard.routes.commands import edit_problems
        from planner.edits import parse_edit
        from planner.geo import GeoOrigin, localize_edit
        from sim.edit_check import edit_problem

        # lat/lon in km around the run's origin (its retained scene), as its dashboard does
        geo = (self.scene or {}).get("geo")
        raw, at_places = localize_edit(raw, GeoOrigin.model_validate(geo) if geo else None)
        if at_places:
            problems = [(at, what) for at, _, what in (p.partition(": ") for p in at_places)]
            raise _problems(422, "invalid edit", problems)
        try:
            parsed = parse_edit({**raw, "source": "operator"})
        except ValidationError as exc:
            raise _problems(422, "invalid edit", edit_problems(exc, raw)) from None
        if self.scene is not None:  # the rule the sim applies, on the run's known world
            problem = edit_problem(parsed, world_of_scene(self.scene))
            if problem is not None:
                raise _problems(
                    409 if problem.kind == "conflict" else 422,
                    f"edit refused: {problem.message}",
                    [(problem.path, problem.message)],
                )
        return await self._send(EditMessage(edit=raw)) | {"edit": parsed.describe()}

    async def command(self, kind: str, text: str | None, drone: str | None) -> dict[str, Any]:
        message = CommandMessage.model_validate(
            {"command": kind, "text": text or None, "drone": drone, "source": "cli"}
        )
        return await self._send(message)

    async def speed(self, pace: float | None) -> dict[str, Any]:
        return await self._send(SpeedMessage(speed=pace))

    async def ask(self, question: str, timeout: float) -> dict[str, Any]:
        ask_id = uuid.uuid4().hex[:16]
        await self._send(AskMessage(id=ask_id, text=question), flush=False)
        try:
            async with asyncio.timeout(timeout):
                async for message in self._answers:
                    payload = message.payload
                    if (
                        message.topic == "answers"
                        and payload.get("id") == ask_id
                        and payload.get("stage") is None  # a stage: progress, not the reply
                    ):
                        return {"id": ask_id, **message.payload}
        except TimeoutError:
            pass
        raise LiveError(
            f"no answer within {timeout:g} s (is the mission running and answering questions?)",
            EXIT_FAILED,
        )

    async def _send(self, message: CmdMessage, *, flush: bool = True) -> dict[str, Any]:
        bus = self.bus
        assert bus is not None
        if message.id is None:  # the command's one id, from here to the executive
            message = message.model_copy(update={"id": new_command_id()})
        wire = message.wire()
        bus.publish("cmd", wire)
        if flush:
            await bus.stop()  # sends what is queued, within its bound
            if bus.lost.get("cmd"):
                raise LiveError(f"the command could not be sent to {bus.url}", EXIT_FAILED)
        return {"sent": wire, "run_id": bus.run_id}


# ----- shared ------------------------------------------------------------------------------


def _link(url: str | None, mqtt: str | None, token: str | None) -> _Http | _Mqtt:
    """The way in the options name, with the token to use."""
    if url is not None and mqtt is not None:
        raise fail("give --url (the dashboard) or --mqtt (the broker), not both")
    if mqtt is not None:
        broker = mqtt if "://" in mqtt else f"mqtt://{mqtt}"
        from cli.common import check_mqtt_url

        check_mqtt_url(broker)
        secret = token or os.environ.get(TOKEN_ENV)
        if not secret:
            raise fail(
                f"--token: give the run's control token (the one isr run printed, or "
                f"${TOKEN_ENV}): commands on MQTT are signed with it"
            )
        return _Mqtt(broker, secret)
    address = url or DEFAULT_URL
    parts = urlsplit(address)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise fail(f"--url {address!r}: expected http://HOST:PORT (the run's dashboard)")
    in_url = parse_qs(parts.query).get("token", [None])[0]
    secret = token or os.environ.get(TOKEN_ENV) or in_url
    if not secret:
        raise fail(
            f"--token: give the run's control token (the one isr run printed, ${TOKEN_ENV}, "
            "or the dashboard address with its ?token=)"
        )
    base = f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}"
    return _Http(base, secret)


def _run(link: _Http | _Mqtt, run: str, as_json: bool, act: Any) -> None:
    """Open the run on ``link``, ``act`` on it, print the answer; errors: one line, exit."""
    if not run.strip():
        raise fail("RUN is empty: give the live run's id")

    async def go() -> dict[str, Any]:
        try:
            await link.open(run)
            result: dict[str, Any] = await act(link)
            return result
        finally:
            await link.close()

    try:
        answer = asyncio.run(go())
    except LiveError as exc:
        raise fail(str(exc), exc.code) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    _print(answer, as_json)


def _print(answer: dict[str, Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(answer, default=str) + "\n")
        return
    if "answer" in answer:
        for line in str(answer["answer"]).split("\n"):
            typer.echo(shown(line))
        follow_ups = answer.get("follow_ups")
        if isinstance(follow_ups, list) and follow_ups:
            typer.echo("")
            typer.echo("You could ask next:")
            for text in follow_ups:
                typer.echo(shown(f"  {text}"))
        return
    sent = answer.get("sent") or {}
    what = answer.get("edit") or (
        f"{sent.get('command')}" + (f" {sent['drone']}" if sent.get("drone") else "")
        if sent.get("type") == "command"
        else None
    )
    if what is None and sent.get("type") == "speed":
        speed = sent.get("speed")
        what = "speed " + ("max" if speed is None else f"{speed:g}x")
    typer.echo(shown(f"sent to run {answer.get('run_id')}: {what} (takes effect at the next tick)"))


def _refusal(status: int, body: bytes, what: str) -> LiveError:
    """A dashboard's 4xx/5xx answer as one or more lines, and the exit code."""
    try:
        data = json.loads(body)
    except ValueError:
        data = {}
    error = data.get("error") if isinstance(data, dict) else None
    problems = data.get("problems") if isinstance(data, dict) else None
    pairs = [
        (str(p.get("path")), str(p.get("message")))
        for p in (problems if isinstance(problems, list) else [])
        if isinstance(p, dict)
    ]
    if status == 404 and error is None:
        error = f"{what}: not found (is that a run's dashboard?)"
    return _problems(status, error or f"{what}: HTTP {status}", pairs)


def _problems(status: int, error: str, pairs: list[tuple[str, str]]) -> LiveError:
    lines = [f"{error} (HTTP {status})"]
    lines += [f"  {path}: {message}" for path, message in pairs]
    code = EXIT_BAD_INPUT if 400 <= status < 500 and status not in (408, 429) else EXIT_FAILED
    return LiveError("\n".join(lines), code)


def _edit_json(text: str) -> dict[str, Any]:
    """The edit argument: JSON text, or ``@FILE`` holding it."""
    if text.startswith("@"):
        path = Path(text[1:])
        try:
            text = path.read_text()
        except OSError as exc:
            raise fail(f"{path}: cannot read the edit: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise fail(f"the edit is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise fail('the edit must be one JSON object, e.g. {"op": "remove_sam", "id": "S1"}')
    return data


def _speed(value: str) -> float | None:
    from sim import MAX_SPEED, MIN_SPEED

    if value.lower() == "max":
        return None
    try:
        pace = float(value)
    except ValueError:
        raise fail(f"SPEED {value!r}: a number of times real time, or max") from None
    if not MIN_SPEED <= pace <= MAX_SPEED:
        raise fail(f"SPEED {value}: from {MIN_SPEED:g} to {MAX_SPEED:g}, or max")
    return pace


def _json_object(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw)
    except ValueError:
        raise LiveError("the dashboard answered something that is not JSON", EXIT_FAILED) from None
    if not isinstance(data, dict):
        raise LiveError("the dashboard answered something that is not a JSON object", EXIT_FAILED)
    return data
