"""One engine per agent role: build the engines a run's configuration names, and route each
agent's call to its own.

``engine_from_spec`` builds one engine from an ``EngineSpec``. ``role_engines`` builds one
engine per distinct spec (roles that share a spec share its client) and, when the roles do
not all share one, a ``RoleEngines`` that hands each call to the engine of ``call.agent``.
``engine_for(engine, agent)`` is the engine that really answers ``agent`` (the router's
pick, or the engine itself), which is what a trace records for that call.

``planner_engine(table)`` and ``responder_engine(table)`` are the run's engines for the
planning round (strategist, allocator, critic) and for the question box (responder), from
the engine of each role that asks one (``mission.config.RunConfig.engine_table()``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from agents.engines.base import AgentCall, Engine, EngineReply
from agents.engines.spec import PLANNING_ROLES, AgentRole, EngineSpec

__all__ = [
    "PLANNING_ROLES",
    "RoleEngines",
    "aclose_engine",
    "engine_for",
    "engine_from_spec",
    "planner_engine",
    "responder_engine",
    "role_engines",
]


def engine_from_spec(spec: EngineSpec, *, records: Iterable[Any] | None = None) -> Engine:
    """The engine ``spec`` names (``records``: the replay engine's recorded answers)."""
    from agents.engines import make_engine

    key = spec.api_key.get_secret_value() if spec.api_key is not None else None
    return make_engine(
        spec.engine, model=spec.model, api_key=key, base_url=spec.base_url, records=records
    )


class RoleEngines:
    """The engine that hands each call to the engine of its agent (``call.agent``).

    Its own ``name`` is ``per_role`` (what a record that is not one agent's says); each
    call's record names the engine that answered it (``engine_for``)."""

    name = "per_role"
    model: str | None = None

    def __init__(self, engines: Mapping[str, Engine], default: Engine) -> None:
        """``engines`` by agent; an agent not in it is answered by ``default``."""
        self._engines = dict(engines)
        self._default = default

    def for_agent(self, agent: str) -> Engine:
        """The engine that answers ``agent``."""
        return self._engines.get(agent, self._default)

    @property
    def engines(self) -> dict[str, Engine]:
        """The engine of each configured agent (a copy)."""
        return dict(self._engines)

    async def complete(self, call: AgentCall, *, timeout_s: float) -> EngineReply:
        """The answer of ``call.agent``'s engine."""
        return await self.for_agent(call.agent).complete(call, timeout_s=timeout_s)

    async def aclose(self) -> None:
        """Close every engine's connections once."""
        seen: set[int] = set()
        for engine in (*self._engines.values(), self._default):
            if id(engine) not in seen:
                seen.add(id(engine))
                await aclose_engine(engine)


def engine_for(engine: Engine, agent: str) -> Engine:
    """The engine that really answers ``agent``: a ``RoleEngines``' pick, else ``engine``."""
    return engine.for_agent(agent) if isinstance(engine, RoleEngines) else engine


async def aclose_engine(engine: Engine) -> None:
    """Close ``engine``'s connections if it holds any (the SDK engines do)."""
    close = getattr(engine, "aclose", None)
    if close is not None:
        await close()


def role_engines(
    specs: Mapping[str, EngineSpec], *, records: Iterable[Any] | None = None
) -> Engine:
    """One engine per distinct spec in ``specs`` (by agent); a ``RoleEngines`` over them
    unless every agent has the same spec (then that one engine). No specs: rules."""
    built: dict[EngineSpec, Engine] = {}
    kept = list(records) if records is not None else None
    for spec in specs.values():
        if spec not in built:
            built[spec] = engine_from_spec(spec, records=kept)
    if not built:
        return engine_from_spec(EngineSpec())
    if len(built) == 1:
        return next(iter(built.values()))
    by_agent = {agent: built[spec] for agent, spec in specs.items()}
    return RoleEngines(by_agent, default=next(iter(by_agent.values())))


def planner_engine(
    table: Mapping[AgentRole, EngineSpec], *, records: Iterable[Any] | None = None
) -> Engine:
    """The planning round's engine: each of strategist, allocator and critic on its own, as
    ``table`` (role -> spec) gives them; the rules when it gives none of them (the agents
    off: the round then asks none)."""
    planning: dict[str, EngineSpec] = {r: table[r] for r in PLANNING_ROLES if r in table}
    if not planning:
        return engine_from_spec(EngineSpec())
    return role_engines(planning, records=records)


def responder_engine(table: Mapping[AgentRole, EngineSpec]) -> Engine:
    """The question box's engine: the responder's in ``table`` (the rules if none)."""
    return engine_from_spec(table.get("responder", EngineSpec()))
