"""A Mosquitto broker of a test's own: on a free port, with the test's configuration
(password file, ACLs, TLS with certificates the test makes with the openssl command), that
the test may kill and start again on the same port.

``Mosquitto(tmp_path, extra=[...])`` writes ``mosquitto.conf``; ``start()`` returns once
the broker says it is running (it reads the broker's log line by line: no sleeping);
``kill()`` sends SIGKILL to its process (only the one this object started); ``stop()``
ends it at the end of the test.
"""

from __future__ import annotations

import getpass
import os
import queue
import random
import shutil
import signal
import socket
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
READY = "running"  # "mosquitto version 2.0.11 running"


# Below Linux's ephemeral range (32768-60999): the kernel never hands these ports to a
# connection or to a ``port=0`` server, so one stays free between choosing it and the broker
# binding it (and between a kill and a restart), however many tests run beside this one.
_PORTS = (20000, 32000)
_RANDOM = random.SystemRandom()  # not the seedable module state: workers never agree


def free_port() -> int:
    """A port on 127.0.0.1 nobody listens on now, outside the ephemeral range."""
    for _ in range(200):
        port = _RANDOM.randrange(*_PORTS)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError(f"no free port in {_PORTS[0]}-{_PORTS[1]} after 200 tries")


class Mosquitto:
    """One broker process at a time on ``port``, configured by ``extra`` lines."""

    def __init__(self, folder: Path, *, extra: list[str] | None = None, port: int = 0) -> None:
        self.folder = folder
        self.port = port or free_port()
        self.conf = folder / "mosquitto.conf"
        self.log: list[str] = []
        self.proc: subprocess.Popen[str] | None = None
        lines = [
            f"listener {self.port} 127.0.0.1",
            "persistence false",  # a restart forgets every retained message
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            "log_type notice",
            "log_type information",
            f"user {getpass.getuser()}",  # as root: keep reading the test's files
            *(extra or ["allow_anonymous true"]),
        ]
        self.conf.write_text("\n".join(lines) + "\n")

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30.0) -> float:
        """Start the broker; returns ``time.monotonic()`` when it said it was running."""
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.proc = subprocess.Popen(
            [MOSQUITTO, "-c", str(self.conf)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        stream = self.proc.stderr
        assert stream is not None

        def pump() -> None:
            for line in stream:
                lines.put(line.rstrip())
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(
                    "mosquitto did not start:\n" + "\n".join(self.log[-20:])
                ) from None
            if line is None:
                raise AssertionError("mosquitto exited:\n" + "\n".join(self.log[-20:]))
            self.log.append(line)
            if line.endswith(READY):
                ready = time.monotonic()
                # keep reading its log, so the pipe never fills
                threading.Thread(target=self._keep, args=(lines,), daemon=True).start()
                return ready

    def _keep(self, lines: queue.Queue[str | None]) -> None:
        while (line := lines.get()) is not None:
            self.log.append(line)

    def kill(self) -> None:
        """SIGKILL the broker this object started, and wait for it."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """End the broker (SIGTERM, then SIGKILL), if it runs."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass(frozen=True)
class Certificates:
    ca: Path
    cert: Path
    key: Path


def make_certificates(folder: Path) -> Certificates:
    """A CA and a server certificate for 127.0.0.1 / localhost signed by it (openssl)."""

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        "-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=isr test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-addext", "subjectKeyIdentifier=hash",
    )  # fmt: skip
    openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key",
        "-out", "server.csr", "-subj", "/CN=127.0.0.1",
    )  # fmt: skip
    (folder / "server.ext").write_text(
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
        "basicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage=serverAuth\n"
        "authorityKeyIdentifier=keyid\n"
        "subjectKeyIdentifier=hash\n"
    )
    openssl(
        "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "2", "-out", "server.pem", "-extfile", "server.ext",
    )  # fmt: skip
    return Certificates(folder / "ca.pem", folder / "server.pem", folder / "server.key")


def password_file(folder: Path, users: dict[str, str]) -> Path:
    """A Mosquitto password file (hashed by mosquitto_passwd) for ``users``."""
    path = folder / "passwords"
    path.write_text("".join(f"{user}:{password}\n" for user, password in users.items()))
    subprocess.run(["mosquitto_passwd", "-U", str(path)], check=True, capture_output=True)
    return path
