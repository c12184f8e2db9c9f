"""Re-execute a traced run exactly: the same scenario, the first plan, and every recorded
input resubmitted at its stamped tick; the state hashes must match the recorded ones.

Planning and agents are not re-run: what they decided is in the inputs (``fly_path`` with
its exact geometry, holds, returns), so a replay needs no planner, no network, no LLM.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from executive.errors import ExecutiveError
from executive.traces.codec import input_from_json
from planner.scenario import ScenarioError, parse_scenario
from sim import Sim

__all__ = ["ReplayResult", "replay", "resimulate"]


@dataclass
class ReplayResult:
    """How a replay went: the hashes it produced and how they compare with the recorded."""

    ticks: int  # ticks simulated (the replay's last tick + 1)
    hashes: dict[int, str]  # tick -> state hash, every ``hash_every`` ticks
    compared: int  # recorded hashes that the replay also produced
    # (tick, recorded, replayed): replayed is "<none>" when the replay did not reach the tick
    mismatches: list[tuple[int, str, str]]
    final_hash: str  # the state hash after the last tick simulated

    @property
    def exact(self) -> bool:
        """Every recorded hash reproduced, and at least one was compared."""
        return self.compared > 0 and not self.mismatches


def resimulate(
    scenario: Mapping[str, Any], inputs: Iterable[Mapping[str, Any]], *, hash_every: int = 20
) -> Sim:
    """A new simulation of the traced ``scenario`` with every recorded input submitted at
    its stamped tick (timeline edits come from the scenario itself); not stepped yet.

    Raises ``ExecutiveError`` when the scenario does not load or the trace holds no input.
    """
    try:
        parsed = parse_scenario(dict(scenario), "<traced scenario>")
    except ScenarioError as exc:
        raise ExecutiveError(f"the traced scenario does not load: {exc}") from exc
    rows = [r for r in inputs if r["kind"] in ("edit", "command")]
    if not rows:
        raise ExecutiveError("the trace holds no inputs: nothing to replay")
    sim = Sim(parsed, None, hash_every=hash_every)
    for row in rows:
        if row.get("source") != "timeline":
            sim.submit(input_from_json(row["kind"], row["payload"]))
    return sim


def replay(
    scenario: Mapping[str, Any],
    inputs: Iterable[Mapping[str, Any]],
    recorded_hashes: Mapping[int, str],
    *,
    hash_every: int,
    until: int | None = None,
) -> ReplayResult:
    """Re-run the trace and compare its state hashes with ``recorded_hashes``.

    ``inputs``: rows with tick, kind (edit | command), payload, source, in the order they
    were submitted (the first plan is its tick-0 fly_path commands). ``hash_every`` must be
    the run's own (its policy's), or the hashes fall on other ticks. Without ``until`` it
    runs to the end of the mission and at least to the last recorded hash; with it, ticks
    ``0 .. until - 1`` only (recorded hashes past that count as mismatches).
    """
    sim = resimulate(scenario, inputs, hash_every=hash_every)
    last_tick = max(recorded_hashes, default=-1) if until is None else until - 1
    hashes: dict[int, str] = {}
    while sim.tick <= last_tick or (until is None and not sim.done):
        result = sim.step()
        if result.state_hash is not None:
            hashes[result.tick] = result.state_hash
    mismatches = [
        (t, h, hashes.get(t, "<none>"))
        for t, h in sorted(recorded_hashes.items())
        if hashes.get(t) != h
    ]
    compared = sum(1 for t in recorded_hashes if t in hashes)
    return ReplayResult(sim.tick, hashes, compared, mismatches, sim.state_hash())
