"""The loop's own options: what the real-time core needs of a run's configuration.

``LoopOptions(policy, seed, recorded, agent_roles, agents_off, agent_cadence_s)``: the
``Policy`` the loop follows, the planner's seed, the run's configuration as the trace store
keeps it with the run (``RunRecord.config``), and the agents of the planning chain: which
exist, which are off, which are also asked on a timer (``executive.loop.cadence``).
The layer that composes runs (``mission.config.RunConfig.loop_options()``) builds it; the loop
never sees the whole run configuration. Without ``recorded``, the run record keeps the policy
and the seed.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from executive.loop.policy import Policy

__all__ = ["LoopOptions"]


class LoopOptions(BaseModel):
    """What the loop is run with (frozen; unknown fields are refused)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    policy: Policy = Field(default_factory=Policy)
    seed: int = 0  # the planner's random seed, recorded with the run
    # The run's configuration as recorded (secrets masked by whoever built it); None: the
    # policy and the seed.
    recorded: dict[str, JsonValue] | None = None
    # The planning chain's agents (roles) that AGENT_OFF / AGENT_ON may name: () when the
    # run asks none. Those switched off from the start (each traced as skipped in every
    # round until AGENT_ON), and those also asked on a timer: role -> mission seconds.
    agent_roles: tuple[str, ...] = ()
    agents_off: tuple[str, ...] = ()
    agent_cadence_s: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known_agents(self) -> LoopOptions:
        named = [*self.agents_off, *self.agent_cadence_s]
        unknown = sorted({r for r in named if r not in self.agent_roles})
        if unknown:
            have = ", ".join(self.agent_roles) or "none: the run asks no agents"
            raise ValueError(f"unknown agent(s) {', '.join(unknown)}; this run's: {have}")
        slow = [r for r, s in self.agent_cadence_s.items() if not s > 0]
        if slow:
            raise ValueError(f"agent_cadence_s of {', '.join(slow)}: seconds > 0")
        return self

    def record(self) -> dict[str, JsonValue]:
        """The configuration the run's trace record keeps."""
        if self.recorded is not None:
            return dict(self.recorded)
        return {"policy": self.policy.model_dump(mode="json"), "seed": self.seed}
