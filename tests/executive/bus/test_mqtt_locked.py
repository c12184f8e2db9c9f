"""The locked broker of docs/mosquitto.md, for real: a Mosquitto of the test's own started
with the page's very ``acl`` and ``isr.conf`` blocks (paths and port replaced), a password
file made by ``mosquitto_passwd`` and certificates the test makes with openssl. Then the
locks each do their job: the broker refuses strangers and enforces the ACLs, the executive
refuses commands not signed with the run's control token (counted, and without effect), and
a dashboard trusts no status it did not get from the run, answers 503 while its link is
down, and says so in ``/api/state``.

Waits are on messages, or on a bus's link state polled every 20 ms (it has no event);
never a fixed sleep.
"""

from __future__ import annotations

import asyncio
import json
import re
import ssl
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import aiomqtt
import httpx
import pytest
from aiomqtt.exceptions import MqttConnectError

from dashboard.server import start_dashboard
from executive.bus.mqtt import MqttBus
from executive.bus.signing import Signer
from executive.errors import ExecutiveError
from mission.live.host import MissionHost
from tests.conftest import ROOT
from tests.executive.bus.broker import Certificates, Mosquitto, make_certificates, password_file
from tests.executive.bus.test_mqtt import Collector, _executive
from tests.executive.bus.test_mqtt_faults import until

DOCS = ROOT / "docs" / "mosquitto.md"
EXECUTIVE, DASHBOARD = "isr-executive", "isr-dashboard"
PASSWORDS = {EXECUTIVE: "executive-secret", DASHBOARD: "dashboard-secret"}
TOKEN = "locked-control-token"
WAIT = 30.0


def docs_block(name: str) -> str:
    """The fenced block that follows ``<!-- file: NAME -->`` in docs/mosquitto.md."""
    found = re.search(
        rf"<!-- file: {re.escape(name)} -->\s*```text\n(.*?)```", DOCS.read_text(), re.S
    )
    assert found, f"docs/mosquitto.md has no block for {name}"
    return found.group(1)


@dataclass
class Locked:
    broker: Mosquitto
    certs: Certificates

    @property
    def port(self) -> int:
        return self.broker.port

    def url(self, user: str) -> str:
        return f"mqtts://{user}@127.0.0.1:{self.port}"

    def bus(self, user: str, **options) -> MqttBus:
        """A bus logged in as ``user`` (its password given on its own, as the CLI does)."""
        return MqttBus(
            self.url(user), password=PASSWORDS[user], ca_file=str(self.certs.ca), **options
        )

    def client(self, user: str | None, password: str | None = None, **options) -> aiomqtt.Client:
        """A raw client over TLS: anonymous with ``user=None``."""
        return aiomqtt.Client(
            "127.0.0.1",
            self.port,
            username=user,
            password=password if password is not None else PASSWORDS.get(user or ""),
            tls_context=ssl.create_default_context(cafile=str(self.certs.ca)),
            **options,
        )


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[Locked]:
    """The broker of docs/mosquitto.md: /etc/mosquitto/isr/ is ``tmp_path/isr``."""
    isr = tmp_path / "isr"
    (isr / "certs").mkdir(parents=True)
    certs = make_certificates(isr / "certs")
    password_file(isr, PASSWORDS)  # isr/passwords
    (isr / "acl").write_text(docs_block("acl"))
    broker = Mosquitto(tmp_path, extra=[])
    conf = docs_block("isr.conf")
    assert "\nlistener 8883\n" in conf and "allow_anonymous false" in conf
    conf = conf.replace("/etc/mosquitto/isr/", f"{isr}/").replace(
        "\nlistener 8883\n", f"\nlistener {broker.port} 127.0.0.1\n"
    )
    # the helper's own lines (log, persistence, user), without its plain listener: the
    # page's configuration has the only one, with TLS
    own = [
        line
        for line in broker.conf.read_text().splitlines()
        if not line.startswith(("listener", "allow_anonymous"))
    ]
    broker.conf.write_text(conf + "\n".join(own) + "\n")
    broker.start()
    try:
        yield Locked(broker, certs)
    finally:
        broker.stop()


def _run_id() -> str:
    return f"locked-{uuid.uuid4().hex[:12]}"


# ----- the broker's locks: passwords, TLS, ACLs ------------------------------------------


@pytest.mark.mqtt
def test_the_documented_broker_refuses_strangers_and_enforces_its_acls(locked):
    run_id = _run_id()

    async def go() -> None:
        # anonymous: refused by the broker (MQTT 3.1.1 CONNACK 5, not authorised)
        with pytest.raises(MqttConnectError) as anonymous:
            async with locked.client(None):
                pass
        assert "authori" in str(anonymous.value).lower()
        # a wrong password: one clear error, the password never in it
        wrong = MqttBus(
            locked.url(DASHBOARD), password="guess", ca_file=str(locked.certs.ca), role="watcher"
        )
        with pytest.raises(ExecutiveError, match="refused the connection") as refused:
            await wrong.start()
        await wrong.stop()
        assert "guess" not in str(refused.value) and "wrong user name or password" in str(
            refused.value
        )
        # no TLS against the TLS listener; TLS without the CA that signed the broker
        plain = MqttBus(
            f"mqtt://{DASHBOARD}@127.0.0.1:{locked.port}",
            password=PASSWORDS[DASHBOARD],
            role="watcher",
            timeout=2.0,
        )
        with pytest.raises(ExecutiveError, match="cannot reach"):
            await plain.start()
        await plain.stop()
        unknown_ca = MqttBus(
            locked.url(DASHBOARD), password=PASSWORDS[DASHBOARD], role="watcher", timeout=2.0
        )
        with pytest.raises(ExecutiveError, match="CERTIFICATE_VERIFY_FAILED"):
            await unknown_ca.start()
        await unknown_ca.stop()

        # The right users get in, each with its own topics only.
        async with (
            locked.bus(EXECUTIVE, run_id=run_id, token=TOKEN) as executive,
            locked.bus(DASHBOARD, run_id=run_id, role="watcher", token=TOKEN) as watcher,
        ):
            seen = Collector(watcher.subscribe(["status", "events"]))
            commands = executive.subscribe(["cmd"])
            executive.publish("status", {"run_id": run_id, "state": "running"})
            await seen.until(seen.status_is("running"))
            # A dashboard may not publish the executive's topics, nor an executive the
            # commands: the broker drops them (acknowledged, for MQTT 3.1.1, but not sent on).
            async with locked.client(DASHBOARD) as dashboard, locked.client(EXECUTIVE) as other:
                await dashboard.publish(
                    f"isr/{run_id}/status", b'{"state":"ended"}', qos=1, retain=True
                )
                await dashboard.publish(f"isr/{run_id}/events", b'{"kind":"FAKE"}', qos=1)
                await other.publish(f"isr/{run_id}/cmd", b'{"type":"command"}', qos=1)
            # markers sent after them: were the denied ones forwarded, they would come first
            executive.publish("events", {"run_id": run_id, "tick": 1, "kind": "MARKER"})
            watcher.publish("cmd", {"type": "command", "command": "PAUSE"})
            await seen.until(seen.event("MARKER"))
            first = await asyncio.wait_for(commands.get(), WAIT)
            await seen.close()
        assert first.payload.pop("id")  # a watcher gives each command an id
        assert first.payload == {"type": "command", "command": "PAUSE"}
        assert [p["kind"] for p in seen.of("events")] == ["MARKER"]
        assert [p["state"] for p in seen.of("status")] == ["running"]
        # the denied messages reached nobody: nothing was refused by a signature check
        assert watcher.stats()["refused"] == {} and executive.stats()["refused"] == {}

        # the denied retained status was not stored either: a view joining now gets the run's
        async with locked.bus(DASHBOARD, run_id=run_id, role="watcher", token=TOKEN) as late:
            joined = Collector(late.subscribe(["status"]))
            await joined.until(lambda: joined.messages)
            await joined.close()
        assert joined.of("status")[0]["state"] == "running"

    asyncio.run(go())


# ----- the executive's lock: signed commands only ----------------------------------------


@pytest.mark.mqtt
def test_unsigned_or_wrongly_signed_commands_are_refused_counted_and_do_nothing(locked):
    run_id = _run_id()
    topic = f"isr/{run_id}/cmd"

    async def go() -> None:
        executive = _executive(run_id)
        async with (
            locked.bus(DASHBOARD, run_id=run_id, role="watcher", token=TOKEN) as watcher,
            locked.bus(EXECUTIVE, run_id=run_id, token=TOKEN) as bus,
        ):
            seen = Collector(watcher.subscribe(["events", "status", "telemetry"], maxsize=10_000))
            mission = asyncio.get_running_loop().create_task(MissionHost(executive, bus).run(4.0))
            try:
                await seen.until(seen.status_is("running"))
                pause = {"type": "command", "command": "PAUSE"}
                lose = {"type": "edit", "edit": {"op": "disable_drone", "drone": "1"}}
                # what a legitimate dashboard sent, captured on the way (to replay it)
                captured = Signer(TOKEN).seal_command(topic, {"type": "speed", "speed": 4})
                # Someone holding a dashboard's broker password, but not the run's token:
                async with locked.client(DASHBOARD) as intruder:
                    bad = [
                        ("unsigned", json.dumps(pause).encode()),
                        ("bad_signature", Signer("another-token").seal_command(topic, lose)),
                        ("bad_signature", Signer(TOKEN).seal_command("isr/other/cmd", pause)),
                        (
                            "stale",
                            Signer(TOKEN, clock=lambda: time.time() - 600).seal_command(
                                topic, lose
                            ),
                        ),
                        ("accepted", captured),
                        ("replayed", captured),
                    ]
                    for _, data in bad:
                        await intruder.publish(topic, data, qos=1)

                def rejected() -> list[dict]:
                    return [e for e in seen.of("events") if e["kind"] == "CMD_REJECTED"]

                await seen.until(lambda: len(rejected()) == 5)
                # after them, the operator's own PAUSE (signed): it works, and only it
                watcher.publish("cmd", pause)
                await seen.until(seen.event("PAUSE"))
                assert executive.mode == "PAUSED"
                lost = [
                    e
                    for e in seen.of("events")
                    if e["kind"] in ("drone_lost", "edit_applied") or e.get("op") == "disable_drone"
                ]
                assert lost == []
                humans = [e for e in seen.of("events") if e["kind"] == "HUMAN_COMMAND"]
                assert [h["command"] for h in humans] == ["PAUSE"]
            finally:
                executive.stop()
                await asyncio.wait_for(mission, WAIT)
            await seen.close()
        assert [e["refused"] for e in rejected()] == [
            reason for reason, _ in bad if reason != "accepted"
        ]
        assert all(e["reason"].startswith("refused by the MQTT bus") for e in rejected())
        assert bus.stats()["refused"] == {
            "unsigned": 1,
            "bad_signature": 2,
            "stale": 1,
            "replayed": 1,
        }
        # drone 1 flew on: its last telemetry is not that of a lost drone
        assert seen.of("telemetry")[-1]["drones"]["1"]["status"] != "lost"

    asyncio.run(go())


# ----- a dashboard behind the lock: spoofed status, link down ------------------------------


@pytest.mark.mqtt
def test_dashboard_distrusts_a_spoofed_ended_and_answers_503_while_its_link_is_down(locked):
    run_id = _run_id()
    auth = {"Authorization": f"Bearer {TOKEN}"}

    async def go() -> None:
        executive = _executive(run_id)
        async with (
            locked.bus(
                DASHBOARD, run_id=run_id, role="watcher", token=TOKEN, backoff=(0.05, 0.2)
            ) as watcher,
            locked.bus(EXECUTIVE, run_id=run_id, token=TOKEN, backoff=(0.05, 0.2)) as bus,
        ):
            seen = Collector(watcher.subscribe(["events", "status"], maxsize=10_000))
            server = await start_dashboard(watcher, port=0, token=TOKEN)
            mission = asyncio.get_running_loop().create_task(MissionHost(executive, bus).run(4.0))
            try:
                async with httpx.AsyncClient(base_url=server.url, timeout=WAIT) as http:
                    await seen.until(seen.status_is("running"))
                    # A client with the executive's broker password but not the token says
                    # the run is over (retained: what a view joining later would read first).
                    status = f"isr/{run_id}/status"
                    ended = {"run_id": run_id, "state": "ended", "at": time.time() + 60}
                    async with locked.client(EXECUTIVE) as spoofer:
                        await spoofer.publish(
                            status, json.dumps(ended).encode(), qos=1, retain=True
                        )
                        await spoofer.publish(
                            status, Signer("another-token").seal(status, ended), qos=1, retain=True
                        )
                    await until(
                        lambda: sum(watcher.stats()["refused"].values()) == 2, "both refused"
                    )
                    assert watcher.stats()["refused"] == {"unsigned": 1, "bad_signature": 1}
                    state = (await http.get("/api/state", headers=auth)).json()
                    assert state["status"]["state"] == "running"
                    r = await http.post("/api/commands", json={"command": "PAUSE"}, headers=auth)
                    assert r.status_code == 202, r.text  # not 409: the run is not over
                    await seen.until(seen.event("PAUSE"))
                    assert executive.mode == "PAUSED"

                    # The broker dies: the dashboard says so, and sends nothing it cannot
                    # deliver.
                    locked.broker.kill()
                    await until(lambda: watcher.link.state == "down", "the link down")
                    r = await http.post("/api/commands", json={"command": "RESUME"}, headers=auth)
                    assert r.status_code == 503, r.text
                    assert r.headers["Retry-After"] == "2"
                    assert "link to the mission is down" in r.json()["error"]
                    assert "nothing was sent" in r.json()["error"]
                    r = await http.post("/api/speed", json={"speed": 2}, headers=auth)
                    assert r.status_code == 503, r.text
                    link = (await http.get("/api/state")).json()["link"]
                    assert link["state"] == "down" and link["commands"] is False
                    assert link["reason"] and link["broker"] == locked.url(DASHBOARD)
                    assert PASSWORDS[DASHBOARD] not in str(link)
                    assert watcher.pending() == 0  # no RESUME waiting to go out later

                    locked.broker.start()
                    # commands may go once the run is heard again (its executive is back)
                    await until(lambda: watcher.link.commands, "commands possible again")
                    link = (await http.get("/api/state")).json()["link"]
                    assert link["state"] == "up" and link["commands"] is True
                    assert link["reconnects"] == 1
                    assert executive.mode == "PAUSED"  # the refused RESUME never went
                    r = await http.post("/api/commands", json={"command": "RESUME"}, headers=auth)
                    assert r.status_code == 202, r.text
                    await seen.until(
                        lambda: any(
                            e["kind"] == "HUMAN_COMMAND" and e["command"] == "RESUME"
                            for e in seen.of("events")
                        )
                    )
            finally:
                executive.stop()
                await asyncio.wait_for(mission, WAIT)
                await server.stop()
            await seen.close()
        humans = [e["command"] for e in seen.of("events") if e["kind"] == "HUMAN_COMMAND"]
        assert humans == ["PAUSE", "RESUME"]

    asyncio.run(go())
