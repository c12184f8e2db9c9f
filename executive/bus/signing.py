"""Signed MQTT messages: an HMAC of each message with the run's control token.

Contract
--------
Options
    ``Signer(token, *, max_age_s=120.0)``: ``token`` is the control token that both
    ``isr run --mqtt`` and ``isr dashboard --mqtt`` are given (``--token``); ``max_age_s``
    how far a command's time stamp may be from this clock, in seconds.
The scheme (version 1)
    ``key = HMAC-SHA256(token, "isr-mqtt-v1")``. A signed message is the JSON object of the
    payload with one more member, ``"sig"``: the hex HMAC-SHA256, under ``key``, of the MQTT
    topic, a newline, and the payload's canonical JSON (keys sorted, no spaces, ASCII,
    without ``sig``). The topic is in the MAC, so a message signed for one run or topic is
    refused on another. A command (``cmd``) also carries ``ts`` (Unix seconds) and
    ``nonce`` (random hex) inside what is signed; the executive refuses a command whose
    ``ts`` is more than ``max_age_s`` away from its own clock, or whose nonce it has seen
    (a replay). Out topics carry no ``ts``: the broker's ACLs decide who may publish them.
Produces
    ``seal(topic, payload)`` -> the bytes to publish; ``seal_command`` adds ``ts`` and
    ``nonce``. ``open(topic, raw)`` -> the payload without ``sig``, or raises ``Refused``
    naming why (``unsigned``, ``bad_signature``, ``not_json``); ``open_command`` also checks
    ``ts`` and ``nonce`` (``stale``, ``replayed``) and strips them.
Cost before trust
    A message as ``seal`` writes it (``sig`` last) is checked on its bytes, before it is
    parsed: a forged or unsigned one is refused without parsing it. Another member order is
    still accepted (parsed, then checked). Parsing is bounded: nesting too deep for the
    parser (``'[' * 5000``) is ``not_json``, never a ``RecursionError``; so is anything that
    is not UTF-8 JSON. Callers cap the size before calling (``executive.bus.mqtt``).

Anyone holding the token can sign: the token is shared by the executive and its
dashboards (symmetric), so it proves "one of ours", not "the executive"; the broker's ACLs
(docs/mosquitto.md) keep dashboards from publishing the executive's topics.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from pydantic import SecretStr

__all__ = ["SIG", "Refused", "Signer", "canonical", "loads"]

SIG = "sig"
_CONTEXT = b"isr-mqtt-v1"
_MAX_NONCES = 100_000  # remembered command nonces; older ones also age out with max_age_s
# how seal() ends a message: the signature as the last member
_SEALED_TAIL = re.compile(rb',?"sig":"([0-9a-f]{64})"\}$')


class Refused(Exception):
    """A message that is not trusted; ``reason`` is a short word, ``str()`` says more."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def _json_default(value: Any) -> Any:
    # numpy scalars and arrays, sets: whatever the payload builders let through becomes
    # plain JSON rather than failing the send
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    return str(value)


def canonical(payload: dict[str, Any]) -> bytes:
    """The bytes that are signed: keys sorted, no spaces, ASCII only.

    Parsing these bytes and encoding them again gives the same bytes (Python's floats
    round-trip), which is what lets the receiver check a signature on what it parsed.
    """
    return json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=_json_default
    ).encode()


def loads(raw: bytes | bytearray | str) -> Any:
    """``json.loads`` that fails as ``ValueError`` only: bad UTF-8, bad JSON and nesting too
    deep for the parser (a ``RecursionError`` otherwise) alike."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("JSON nested too deep") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8: {exc.reason}") from None


class Signer:
    """Signs and checks messages with one control token (see the module's contract)."""

    def __init__(
        self,
        token: str | SecretStr,
        *,
        max_age_s: float = 120.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        secret = token.get_secret_value() if isinstance(token, SecretStr) else token
        if not secret:
            raise ValueError("the signing token must not be empty")
        self._key = hmac.new(secret.encode(), _CONTEXT, hashlib.sha256).digest()
        self.max_age_s = max_age_s
        self._clock = clock
        self._nonces: OrderedDict[str, float] = OrderedDict()

    def __repr__(self) -> str:
        return "Signer(<token hidden>)"

    def _mac(self, topic: str, body: bytes) -> str:
        return hmac.new(self._key, topic.encode() + b"\n" + body, hashlib.sha256).hexdigest()

    # ----- out -------------------------------------------------------------------------

    def seal(self, topic: str, payload: dict[str, Any]) -> bytes:
        """``payload`` (its ``sig`` member, if any, replaced) signed for ``topic``, as the
        bytes to publish. Raises ``TypeError`` / ``ValueError`` if it cannot be JSON."""
        body = canonical({k: v for k, v in payload.items() if k != SIG})
        tail = f'"{SIG}":"{self._mac(topic, body)}"}}'.encode()
        return body[:-1] + (b"," if len(body) > 2 else b"") + tail

    def seal_command(
        self, topic: str, payload: dict[str, Any], *, sender: str | None = None
    ) -> bytes:
        """A command signed for ``topic`` with a fresh ``ts`` and ``nonce`` (and ``by``, the
        sender's name, when given: the executive rate-limits each sender)."""
        fresh = {"ts": round(self._clock(), 3), "nonce": secrets.token_hex(8)}
        return self.seal(topic, {**payload, **fresh, **({"by": sender} if sender else {})})

    # ----- in --------------------------------------------------------------------------

    def open(self, topic: str, raw: bytes | bytearray | str) -> dict[str, Any]:
        """The payload of a message signed for ``topic``, without its ``sig``.

        Raises ``Refused`` (``not_json``, ``unsigned``, ``bad_signature``).
        """
        data = raw.encode() if isinstance(raw, str) else bytes(raw)
        sealed = _SEALED_TAIL.search(data, max(0, len(data) - 80))  # the tail only
        if sealed is not None:  # as seal() wrote it: check the bytes, parse only if genuine
            body = data[: sealed.start()] + b"}"
            if not hmac.compare_digest(sealed.group(1).decode(), self._mac(topic, body)):
                raise Refused(
                    "bad_signature", "bad signature (another control token, or altered on the way)"
                )
            try:
                payload = loads(body)
            except ValueError:
                raise Refused("not_json", "not a JSON object") from None
            if not isinstance(payload, dict):
                raise Refused("not_json", "not a JSON object")
            return payload
        if b'"sig"' not in data:  # nothing to check: refused unparsed
            if data.lstrip()[:1] != b"{":
                raise Refused("not_json", "not a JSON object")
            raise Refused("unsigned", f"unsigned (no {SIG!r} member)")
        try:
            payload = loads(data)
        except ValueError:
            raise Refused("not_json", "not a JSON object") from None
        if not isinstance(payload, dict):
            raise Refused("not_json", "not a JSON object")
        sig = payload.pop(SIG, None)
        if not isinstance(sig, str) or not sig:
            raise Refused("unsigned", f"unsigned (no {SIG!r} member)")
        try:
            body = canonical(payload)
        except (TypeError, ValueError):  # pragma: no cover - parsed JSON always encodes
            raise Refused("bad_signature", "cannot be encoded again") from None
        if not hmac.compare_digest(sig, self._mac(topic, body)):
            raise Refused(
                "bad_signature", "bad signature (another control token, or altered on the way)"
            )
        return payload

    def open_command(self, topic: str, raw: bytes | bytearray | str) -> dict[str, Any]:
        """``open``, then the command's freshness: ``ts`` within ``max_age_s`` of this clock
        and a ``nonce`` not seen before (both removed from the payload returned).

        Raises ``Refused`` (also ``stale``, ``replayed``).
        """
        payload = self.open(topic, raw)
        ts, nonce = payload.pop("ts", None), payload.pop("nonce", None)
        now = self._clock()
        if (
            not isinstance(ts, (int, float))
            or isinstance(ts, bool)
            or not math.isfinite(ts)
            or abs(now - ts) > self.max_age_s
        ):
            raise Refused(
                "stale",
                f"signed but not fresh: 'ts' must be within {self.max_age_s:g} s of the "
                "executive's clock",
            )
        if not isinstance(nonce, str) or not nonce:
            raise Refused("replayed", "signed but without a 'nonce'")
        while self._nonces:  # forget nonces too old to be accepted again anyway
            oldest, seen = next(iter(self._nonces.items()))
            if now - seen <= 2 * self.max_age_s and len(self._nonces) < _MAX_NONCES:
                break
            del self._nonces[oldest]
        if nonce in self._nonces:
            raise Refused("replayed", "a replay of a command already received")
        self._nonces[nonce] = now
        return payload
