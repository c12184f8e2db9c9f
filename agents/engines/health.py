"""Is each configured engine reachable? One cheap call per engine, with its latency.

``check_engines(specs)`` takes the engine of each role (``RunConfig.engine_table()``),
groups the roles that share an engine, and asks each distinct engine once, all at the same
time, each within ``timeout_s``:

    rules     answers offline: ok at once, nothing asked
    replay    answers from the run's trace: ok at once, nothing asked
    anthropic ``GET /v1/models`` through the SDK (the key is checked too)
    openai    ``GET /models`` through the SDK (Ollama, vLLM, llama.cpp, LiteLLM all serve it)

A failure is ``ok: false`` with the reason (``"unavailable: ..."``, ``"refused: HTTP 401
..."``, ``"timeout: ..."``); a model the server does not list is reported
(``model_listed: false``) next to an ok reachability, since some servers accept names they
do not list. Never raises; no key is ever part of the answer.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from agents.engines.base import EngineError
from agents.engines.per_role import aclose_engine, engine_from_spec
from agents.engines.spec import SERVER_ENGINES, EngineSpec

__all__ = ["EngineHealth", "EngineMonitor", "ListsModels", "check_engine", "check_engines"]


@runtime_checkable
class ListsModels(Protocol):
    """An engine with a cheap reachability call: the models its server lists."""

    async def list_models(self, *, timeout_s: float) -> list[str]:
        """The ids of the models served, within ``timeout_s``."""
        ...


class EngineHealth(BaseModel):
    """One engine's health, and the roles it answers for."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    roles: list[str]
    engine: str
    model: str | None  # the configured model (None: the engine's default, or no model)
    base_url: str | None  # the configured server (None: the SDK's default, or none)
    ok: bool
    latency_ms: float | None  # the reachability call's wall time (None: nothing was asked)
    error: str | None = None  # "kind: message" when not ok
    models_listed: int | None = None  # how many models the server lists
    model_listed: bool | None = None  # the configured model is one of them (None: unknown)
    checked_at: float  # unix time of the check


def _listed(model: str | None, served: Sequence[str]) -> bool | None:
    """Whether ``model`` is served; Ollama lists ``llama3.1:latest`` for ``llama3.1``."""
    if model is None:
        return None
    return model in served or f"{model}:latest" in served


async def check_engine(spec: EngineSpec, roles: Sequence[str], *, timeout_s: float) -> EngineHealth:
    """``spec``'s engine asked its cheapest question (see the module docstring)."""
    base = {
        "roles": list(roles),
        "engine": spec.engine,
        "model": spec.model,
        "base_url": spec.base_url,
        "checked_at": time.time(),
    }
    if spec.engine not in SERVER_ENGINES:  # the registry's: it asks no server
        return EngineHealth(**base, ok=True, latency_ms=None)
    try:
        engine = engine_from_spec(spec)
    except Exception as exc:  # no key, no model: the configuration, not the network
        return EngineHealth(**base, ok=False, latency_ms=None, error=f"unavailable: {exc}")
    model = getattr(engine, "model", None)
    base["model"] = spec.model or model
    if not isinstance(engine, ListsModels):
        await aclose_engine(engine)
        return EngineHealth(**base, ok=True, latency_ms=None)
    started = time.perf_counter()
    try:
        served = await engine.list_models(timeout_s=timeout_s)
    except EngineError as exc:
        error = f"{exc.kind}: {exc.message}"
        return EngineHealth(**base, ok=False, latency_ms=_ms_since(started), error=error)
    except Exception as exc:  # anything else is a failed check, never a crash
        error = f"server_error: {type(exc).__name__}: {exc}"
        return EngineHealth(**base, ok=False, latency_ms=_ms_since(started), error=error)
    finally:
        await aclose_engine(engine)
    return EngineHealth(
        **base,
        ok=True,
        latency_ms=_ms_since(started),
        models_listed=len(served),
        model_listed=_listed(model, served),
    )


def _ms_since(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)


async def check_engines(
    specs: Mapping[str, EngineSpec], *, timeout_s: float = 5.0
) -> list[EngineHealth]:
    """Each distinct engine in ``specs`` (by role) checked once, all at once, in the order
    their first role comes."""
    groups: dict[EngineSpec, list[str]] = {}
    for role, spec in specs.items():
        groups.setdefault(spec, []).append(role)
    checks = [check_engine(spec, roles, timeout_s=timeout_s) for spec, roles in groups.items()]
    return list(await asyncio.gather(*checks))


class EngineMonitor:
    """The health of a run's engines, checked at most once per ``ttl_s``: callers that ask
    while a check runs share it, so a busy page cannot flood a model server."""

    def __init__(
        self, specs: Mapping[str, EngineSpec], *, ttl_s: float = 10.0, timeout_s: float = 5.0
    ) -> None:
        """Watch ``specs`` (the engine of each role)."""
        self.specs = dict(specs)
        self.ttl_s = ttl_s
        self.timeout_s = timeout_s
        self._last: list[EngineHealth] | None = None
        self._at = 0.0
        self._running: asyncio.Task[list[EngineHealth]] | None = None

    async def check(self) -> list[EngineHealth]:
        """The latest health, checked again if it is older than ``ttl_s``."""
        if self._last is not None and time.monotonic() - self._at < self.ttl_s:
            return self._last
        if self._running is None:
            self._running = asyncio.create_task(
                check_engines(self.specs, timeout_s=self.timeout_s), name="engine-health"
            )
        running = self._running
        try:
            result = await asyncio.shield(running)
        finally:
            if running.done() and self._running is running:
                self._running = None
        self._last, self._at = result, time.monotonic()
        return result
