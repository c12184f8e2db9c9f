"""The loop's own options: what the real-time core needs of a run's configuration.

``LoopOptions(policy, seed, recorded)``: the ``Policy`` the loop follows, the planner's seed,
and the run's configuration as the trace store keeps it with the run (``RunRecord.config``).
The layer that composes runs (``mission.config.RunConfig.loop_options()``) builds it; the loop
never sees the whole run configuration. Without ``recorded``, the run record keeps the policy
and the seed.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, JsonValue

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

    def record(self) -> dict[str, JsonValue]:
        """The configuration the run's trace record keeps."""
        if self.recorded is not None:
            return dict(self.recorded)
        return {"policy": self.policy.model_dump(mode="json"), "seed": self.seed}
