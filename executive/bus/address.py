"""Where the MQTT broker is: its URL parsed (``mqtt[s]://[USER[:PASSWORD]@]HOST[:PORT]``),
the password never shown, the TLS context, and run ids that can name a topic level.

``broker_address(url, password)`` is what a link is built from: the password comes from the
URL or on its own (never both), and needs a user name. Errors are ``ExecutiveError``s naming
the broker as ``mqtt://USER@HOST:PORT``.
"""

from __future__ import annotations

import ssl
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

from pydantic import SecretStr

from executive.errors import ExecutiveError

__all__ = [
    "BrokerAddress",
    "broker_address",
    "check_run_id",
    "mask_url",
    "parse_mqtt_url",
    "tls_context",
]


class BrokerAddress(NamedTuple):
    """A parsed broker URL; ``display`` names it without the password."""

    host: str
    port: int
    user: str | None
    password: SecretStr | None
    tls: bool

    @property
    def display(self) -> str:
        """``mqtt[s]://[USER@]HOST:PORT``: safe to print."""
        scheme = "mqtts" if self.tls else "mqtt"
        user = f"{self.user}@" if self.user else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{user}{host}:{self.port}"


def mask_url(url: object) -> str:
    """``url`` with any password in it replaced by ``***`` (for error messages)."""
    text = str(url)
    head, sep, rest = text.partition("://")
    if not sep:
        head, rest = "", text
    at = rest.rfind("@")
    if at < 0:
        return text
    userinfo = rest[:at]
    user, colon, _ = userinfo.partition(":")
    return f"{head}{sep}{user}{':***' if colon else ''}@{rest[at + 1 :]}"


def parse_mqtt_url(url: str) -> BrokerAddress:
    """``mqtt[s]://[user[:password]@]host[:port]`` -> a ``BrokerAddress``.

    The port defaults to 1883 (``mqtts``: 8883); user and password are percent-decoded,
    None when absent. Raises ``ExecutiveError`` naming what is wrong (the URL shown with its
    password masked): another scheme, no host, a port out of 1..65535, or anything after
    ``HOST:PORT``.
    """
    expected = "expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT]"
    shown = repr(mask_url(url))
    if not isinstance(url, str):
        raise ExecutiveError(f"bad MQTT URL {shown}: {expected}")
    parts = urlsplit(url.strip())
    if parts.scheme not in ("mqtt", "mqtts"):
        raise ExecutiveError(f"bad MQTT URL {shown}: the scheme must be mqtt or mqtts ({expected})")
    try:
        port = parts.port
    except ValueError:
        raise ExecutiveError(
            f"bad MQTT URL {shown}: the port must be a number from 1 to 65535 ({expected})"
        ) from None
    if not parts.hostname:
        raise ExecutiveError(f"bad MQTT URL {shown}: no host ({expected})")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ExecutiveError(f"bad MQTT URL {shown}: nothing may follow HOST:PORT ({expected})")
    if port == 0:
        raise ExecutiveError(
            f"bad MQTT URL {shown}: the port must be a number from 1 to 65535 ({expected})"
        )
    tls = parts.scheme == "mqtts"
    user = unquote(parts.username) if parts.username else None
    password = SecretStr(unquote(parts.password)) if parts.password else None
    return BrokerAddress(parts.hostname, port or (8883 if tls else 1883), user, password, tls)


def check_run_id(run_id: str | None) -> str | None:
    """``run_id`` if it can be one MQTT topic level (None passes); else ``ExecutiveError``."""
    if run_id is None:
        return None
    if not isinstance(run_id, str) or not run_id or any(c in run_id for c in "/+#\0"):
        raise ExecutiveError(
            f"run id {run_id!r} cannot name an MQTT topic level "
            "(it must be non-empty, without '/', '+', '#')"
        )
    return run_id


def broker_address(url: str, password: str | SecretStr | None = None) -> BrokerAddress:
    """The broker of ``url``, with ``password`` if given on its own.

    Raises ``ExecutiveError`` for a bad URL, a password given twice, or one without a user.
    """
    address = parse_mqtt_url(url)
    if password is not None:
        if address.password is not None:
            raise ExecutiveError(
                f"the MQTT password is given twice for {address.display}: "
                "in the URL and on its own; give it once"
            )
        secret = password if isinstance(password, SecretStr) else SecretStr(password)
        address = address._replace(password=secret)
    if address.password is not None and not address.user:
        raise ExecutiveError(
            f"an MQTT password needs a user name: mqtt://USER@HOST:PORT (broker {address.display})"
        )
    return address


def tls_context(address: BrokerAddress, ca_file: str | None) -> ssl.SSLContext | None:
    """The TLS context for an ``mqtts`` broker (checked against ``ca_file`` or the system's
    CAs); None for ``mqtt``. Raises ``ExecutiveError`` for a CA file without TLS, or one that
    cannot be read."""
    if not address.tls:
        if ca_file is not None:
            raise ExecutiveError(
                f"a CA file is for TLS: use mqtts://HOST[:PORT] (broker {address.display})"
            )
        return None
    try:
        return ssl.create_default_context(cafile=ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise ExecutiveError(f"cannot use the CA file {ca_file}: {exc}") from None
