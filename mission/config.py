"""One typed run configuration: everything that decides how a mission is run.

The CLI, the dashboard and the benches build a ``RunConfig``; ``mission.session`` runs a
mission from it (the executive's loop receives only its own part, ``loop_options()``), and
the run's trace record stores it as it was (secrets masked), so what a stored run says it
did is what it did.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from agents.engines.spec import (
    AGENT_ROLES,
    ENGINE_NAMES,
    PLANNING_ROLES,
    SERVER_ENGINES,
    AgentRole,
    EngineName,
    EngineSpec,
    PlanningRole,
    check_base_url,
)
from executive.loop.options import LoopOptions
from executive.loop.policy import Policy
from sim.pacing import MAX_SPEED, MIN_SPEED

__all__ = ["ENGINES", "DashboardConfig", "EngineName", "ForkConfig", "RunConfig"]

ENGINES: tuple[EngineName, ...] = ENGINE_NAMES  # the registry's (agents.engines.spec)


class ForkConfig(BaseModel):
    """Begin where a traced run was at the end of a tick (``executive.traces.fork``); the
    parent is read from the run's own trace store."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    parent: str = Field(min_length=1, max_length=64)  # the parent run's id
    tick: int = Field(ge=0)


class DashboardConfig(BaseModel):
    """Where the live dashboard serves, and the token that guards its commands."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str = "127.0.0.1"
    port: int = Field(8000, ge=0, le=65535)  # 0: any free port
    token: SecretStr  # recorded masked, never in clear


class RunConfig(BaseModel):
    """Everything that decides how a mission is run (frozen; recorded with the run)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scenario_file: str | None = None  # where the scenario came from, for reports
    # What a batch knows the run as (suite, mission, policy, disruption): recorded with it.
    labels: dict[str, str] = Field(default_factory=dict)
    # How long the trace writer retries a store that refuses writes before it counts
    # batches as lost (executive.traces.writer)
    trace_retry_s: float = Field(60.0, gt=0, le=3600)
    # A batch task's key (suite/mission/policy): the store keeps one run per key (unique)
    batch_key: str | None = Field(None, max_length=255)
    # Times real time; None runs as fast as possible (and waits for each planning round at
    # its cut, so a batch run reproduces exactly).
    speed: float | None = Field(None, ge=MIN_SPEED, le=MAX_SPEED)
    # The agents' engine: every role's unless ``agent_engines`` gives it its own.
    engine: EngineName = "rules"
    model: str | None = None  # its model (anthropic / openai)
    engine_url: str | None = None  # its server (anthropic / openai); None: the SDK's / env
    engine_key: SecretStr | None = None  # its API key (recorded masked); None: the env's
    # One role's own engine (strategist, allocator, critic, responder), e.g. the responder
    # on a model inside the user's network while the others run on the rules.
    agent_engines: dict[AgentRole, EngineSpec] = Field(default_factory=dict)
    replay_run: str | None = None  # with engine "replay": the run whose answers to replay
    agents: bool = True  # the agent chain next to the algorithmic planner
    # Agents of the chain switched off from the start (each round traces them as skipped;
    # AGENT_ON switches one on live), and agents also asked on a timer, every so many
    # mission seconds (executive.loop.cadence), on top of the rounds events start.
    agents_off: tuple[PlanningRole, ...] = ()
    agent_cadence_s: dict[PlanningRole, float] = Field(default_factory=dict)
    # Outcome lessons (agents.words.lessons) in the agents' prompts: None picks the store's
    # most relevant at the start (and records them here); a replay gets its original's.
    lessons: tuple[str, ...] | None = None
    learn: bool = True  # store this run's lesson when it ends (needs trace_url)
    agent_timeout_s: float = Field(30.0, gt=0)  # one agent call's time limit (slow tier)
    # The live question box's responder may call its read-only tools (agents.tools) on the
    # run's world, each call traced under it; off: it answers from the state alone.
    responder_tools: bool = False
    # The planning round's allocator and critic may call their tools (agents.tools) on the
    # round's problem, a copy (an acting tool proposes, never commits), each call traced
    # under the agent's run; off: one forced answer each.
    agent_tools: bool = False
    oracle: bool = False  # plan once knowing the whole timeline at t = 0 (a comparison)
    # Plan once knowing every event and its time (planner.clairvoyant): the reference.
    clairvoyant: bool = False
    seed: int = 0  # the planner's random seed
    # The planner's search budget in iterations; None: ``policy.batch_iterations`` when the
    # run goes as fast as possible (reproducible), else bounded by the round's deadline.
    iterations: int | None = Field(None, ge=1)
    trace_url: str | None = None  # a SQLAlchemy URL; None: no traces
    # Also publish on this broker: mqtt[s]://[USER@]HOST[:PORT]. A password given in the URL
    # is moved to mqtt_password (recorded masked), so the URL never holds one.
    mqtt: str | None = None
    mqtt_password: SecretStr | None = None
    mqtt_ca: str | None = None  # the CA file (PEM) that checks an mqtts:// broker
    # Signs and checks every MQTT message (executive.bus.signing); None: the dashboard's
    # token, and without a dashboard the messages go unsigned.
    mqtt_token: SecretStr | None = None
    dashboard: DashboardConfig | None = None  # serve the live dashboard
    # Print the control token for the person who started the run: not when it came from
    # the environment (a secret kept there is not to land in a terminal or a log).
    show_token: bool = True
    fork: ForkConfig | None = None  # a fork of a traced run (needs trace_url)
    run_id: str | None = Field(None, pattern=r"^[0-9a-f]{16}$")  # None: a fresh id
    policy: Policy = Policy()

    @model_validator(mode="before")
    @classmethod
    def _password_out_of_url(cls, data: Any) -> Any:
        url = data.get("mqtt") if isinstance(data, dict) else None
        if not isinstance(url, str) or "@" not in url:
            return data
        scheme, sep, rest = url.partition("://")
        userinfo, _, hostport = rest.rpartition("@")
        user, colon, password = userinfo.partition(":")
        if not sep or not colon:
            return data
        if data.get("mqtt_password") is not None:
            raise ValueError("mqtt: the password is given twice (in the URL and mqtt_password)")
        return {
            **data,
            "mqtt": f"{scheme}://{user}@{hostport}",
            "mqtt_password": SecretStr(unquote(password)),
        }

    @model_validator(mode="after")
    def _consistent(self) -> RunConfig:
        if self.engine == "replay" and not self.replay_run:
            raise ValueError("engine 'replay' needs replay_run: the run whose answers to replay")
        if self.engine not in SERVER_ENGINES and (self.engine_url or self.engine_key):
            raise ValueError(f"engine_url / engine_key: the {self.engine} engine asks no server")
        check_base_url(self.engine_url)
        for role, spec in self.agent_engines.items():
            if spec.engine == "replay":
                raise ValueError(
                    f"agent_engines.{role}: replay answers a whole run (engine: replay), "
                    "not one role"
                )
            if self.engine == "replay":
                raise ValueError(
                    f"agent_engines.{role}: a replayed run answers every role from its trace"
                )
        if self.agent_cadence_s and not self.agents:
            raise ValueError("agent_cadence_s: the agents are off (agents: false)")
        slow = [r for r, every in self.agent_cadence_s.items() if not every > 0]
        if slow:
            raise ValueError(f"agent_cadence_s.{slow[0]}: mission seconds > 0")
        if len(set(self.agents_off)) != len(self.agents_off):
            raise ValueError("agents_off: an agent is named twice")
        if self.fork is not None and self.trace_url is None:
            raise ValueError("fork needs trace_url: the store that holds the parent run")
        if self.oracle and self.clairvoyant:
            raise ValueError("oracle and clairvoyant: a run flies one reference plan")
        if self.fork is not None and self.clairvoyant:
            raise ValueError("fork and clairvoyant: a fork flies on from the parent's plan")
        if self.fork is not None and self.oracle:
            raise ValueError("fork and oracle: a fork flies on from the parent's plan")
        if self.mqtt is not None:
            parts = urlsplit(self.mqtt)
            if parts.scheme not in ("mqtt", "mqtts") or not parts.netloc:
                raise ValueError(
                    f"mqtt {self.mqtt!r}: expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT]"
                )
            if self.mqtt_ca is not None and parts.scheme != "mqtts":
                raise ValueError("mqtt_ca: a CA file is for TLS, an mqtts:// broker")
        elif self.mqtt_password is not None or self.mqtt_ca is not None:
            raise ValueError("mqtt_password and mqtt_ca need an mqtt broker URL")
        return self

    def engine_for(self, role: AgentRole) -> EngineSpec:
        """The engine that answers ``role``: its own in ``agent_engines``, else the run's
        (``engine``, ``model``, ``engine_url``, ``engine_key``). A replayed run's planning
        roles replay; its responder answers live questions with the rules."""
        own = self.agent_engines.get(role)
        if own is not None:
            return own
        if self.engine == "replay" and role == "responder":
            return EngineSpec()
        return EngineSpec(
            engine=self.engine, model=self.model, base_url=self.engine_url, api_key=self.engine_key
        )

    def engine_table(self) -> dict[AgentRole, EngineSpec]:
        """The engine of each role that asks one in this run (with the agents off, only the
        responder's: the planning round then asks none)."""
        roles = AGENT_ROLES if self.agents else ("responder",)
        return {role: self.engine_for(role) for role in roles}

    @property
    def mqtt_signing_token(self) -> SecretStr | None:
        """The token that signs this run's MQTT messages: ``mqtt_token``, else the
        dashboard's, else None (unsigned)."""
        if self.mqtt_token is not None:
            return self.mqtt_token
        return self.dashboard.token if self.dashboard is not None else None

    @property
    def live(self) -> bool:
        """Published on a bus: for a dashboard, an MQTT broker, or both."""
        return self.dashboard is not None or self.mqtt is not None

    @property
    def search_iterations(self) -> int | None:
        """The planner's iteration budget for this run (see ``iterations``)."""
        if self.iterations is not None:
            return self.iterations
        return self.policy.batch_iterations if self.speed is None else None

    def recorded(self) -> dict[str, object]:
        """The configuration as the trace store keeps it (tokens and passwords masked)."""
        return self.model_dump(mode="json")

    def loop_options(self) -> LoopOptions:
        """What the executive's loop takes of this configuration: the policy, the seed, the
        whole configuration as the run's record keeps it (``recorded``), and the planning
        chain's agents (those off, those on a cadence)."""
        return LoopOptions(
            policy=self.policy,
            seed=self.seed,
            recorded=self.recorded(),
            agent_roles=PLANNING_ROLES if self.agents else (),
            agents_off=self.agents_off if self.agents else (),
            agent_cadence_s=dict(self.agent_cadence_s),
        )
