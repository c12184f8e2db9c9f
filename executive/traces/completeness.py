"""Is a run's trace whole? Before a replay says "exact", every tick's telemetry, state hash
and input must be in the store.

* telemetry: a row every ``policy.telemetry_every`` ticks from 0 to the run's last tick;
* state hashes: one every ``policy.hash_every`` ticks, at the ticks ``every - 1``,
  ``2 * every - 1`` ... (a replay compares those it has: a missing one is a check never made);
* inputs: numbered 1, 2, 3 ... per run as emitted (``inputs.seq``); a gap, or fewer than the
  run's end says it emitted (``runs.inputs_emitted``), is an input lost, and a replay
  without it re-executes another run;
* and what the writer itself counted as not stored (``trace_lost`` in the outcome).

``check(reader, run)`` returns a ``Completeness`` naming the missing tick ranges per table.
Runs stored before inputs were numbered are checked on telemetry and hashes only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from executive.traces.loss import describe
from executive.traces.reader import Row, TraceReader

__all__ = ["Completeness", "check", "last_tick_of", "missing_ranges"]


@dataclass
class Completeness:
    """What a run's trace lacks: table -> missing tick ranges (inclusive), and the inputs
    lost by number."""

    last_tick: int
    missing: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    inputs_missing: int = 0  # inputs the numbering says were emitted and are not stored
    reported: dict[str, dict[str, Any]] = field(default_factory=dict)  # the writer's count

    @property
    def complete(self) -> bool:
        """Nothing missing, nothing counted lost."""
        return not self.missing and not self.inputs_missing and not self.reported

    def describe(self) -> str:
        """One line naming the gaps: "telemetry ticks 585-1605; 2 inputs (ticks 600-640)"."""
        parts = []
        for table, ranges in self.missing.items():
            spans = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in ranges)
            parts.append(f"{table} missing at ticks {spans}")
        if self.inputs_missing and "inputs" not in self.missing:
            parts.append(f"{self.inputs_missing} input(s) missing")
        if self.reported and not parts:
            parts.append(f"the writer counted {describe(self.reported)} not stored")
        return "; ".join(parts)


def missing_ranges(
    present: Iterable[int], every: int, last: int, first: int = 0
) -> list[tuple[int, int]]:
    """The tick ranges where a row due every ``every`` ticks from ``first`` to ``last`` is
    absent."""
    have = set(present)
    out: list[tuple[int, int]] = []
    for tick in range(first, last + 1, every):
        if tick in have:
            continue
        if out and out[-1][1] == tick - every:
            out[-1] = (out[-1][0], tick)
        else:
            out.append((tick, tick))
    return out


def last_tick_of(run: Row, telemetry: list[int]) -> int:
    """The last tick the trace must cover: the outcome's for a run that ended; for one that
    did not, its last telemetry row (a killed writer may have committed part of its last
    tick's records: the end of such a run is "ended early", said apart)."""
    ticks = (run.get("outcome") or {}).get("ticks")
    if run.get("status") == "ended" and isinstance(ticks, int):
        return ticks - 1
    return max(telemetry, default=0)


def check(reader: TraceReader, run: Row, *, last_tick: int | None = None) -> Completeness:
    """Check ``run`` (a ``TraceReader.run`` row) up to ``last_tick`` (default: its last)."""
    run_id = run["run_id"]
    policy = (run.get("config") or {}).get("policy") or {}
    stored = reader.ticks(run_id, "telemetry")
    last = last_tick_of(run, stored) if last_tick is None else last_tick
    out = Completeness(last, reported=dict((run.get("outcome") or {}).get("trace_lost") or {}))
    telemetry = missing_ranges(stored, int(policy.get("telemetry_every", 5)), last)
    if telemetry:
        out.missing["telemetry"] = telemetry
    recorded = reader.state_hashes(run_id)
    # a run that did not end is checked up to its last hash (its end is said apart)
    upto = last if run.get("status") == "ended" else min(last, max(recorded, default=0))
    every = int(policy.get("hash_every", 20))
    hashes = missing_ranges(recorded, every, upto, first=every - 1)  # after ticks every-1, ...
    if hashes:
        out.missing["state_hashes"] = hashes
    _check_inputs(reader.input_numbers(run_id), run.get("inputs_emitted"), out)
    return out


def _check_inputs(numbered: list[tuple[int, int]], emitted: int | None, out: Completeness) -> None:
    """Gaps in the inputs' numbers ((seq, tick) in order), as counts and as the tick ranges
    between the neighbours of each gap (where the lost input must have been stamped)."""
    if not numbered:
        return
    ranges: list[tuple[int, int]] = []
    lost = 0
    before = (0, 0)  # (seq, tick) of the input before the gap
    for seq, tick in numbered:
        if seq > before[0] + 1:
            lost += seq - before[0] - 1
            ranges.append((before[1], tick))
        before = (seq, tick)
    if emitted is not None and emitted > before[0]:
        lost += emitted - before[0]
        ranges.append((before[1], out.last_tick))
    out.inputs_missing = lost
    if ranges:
        out.missing["inputs"] = ranges
