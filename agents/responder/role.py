"""The responder's role (seed 000 §4.5, Appendix A.6): its prompt, its output, its tool.

The system prompt is A.6 adapted to a mission in flight (the hard constraints and the
memories are appended by ``respond``). The answer is a ``ResponderOutput``
(``extra="forbid"``): the text for the operator, the ``numbers`` it cites and the ``ids`` it
names, so both can be checked against the state. ``RESPONDER_TOOL``'s input schema is
generated from that model.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agents.engines.base import ToolSpec

__all__ = ["RESPONDER_PROMPT", "RESPONDER_TOOL", "TOOLS_NOTE", "CitedNumber", "ResponderOutput"]

RESPONDER_PROMPT = """\
You are the ISR Mission Responder of a multi-drone ISR mission executive.

Your role:
- Answer the operator's question using ONLY the MISSION STATE below (and the WHAT-IF RESULT
  when one is given): the known environment, each drone's status, position, fuel left, fuel
  budget, remaining path and fuel margin, points, the committed plan.
- You never recompute routes. A what-if has already been planned on a copy; report its
  difference against the current plan, do not invent another.

When a mission plan exists:
- ALWAYS cite specific numbers from the state: fuel left and fuel budget per drone, the fuel
  margin (fuel left - remaining path), points collected per drone and in total, points still
  planned, counts of collected vs open targets, the open targets by id.
- Every number you state goes in `numbers` too (label, value, unit), and every target, drone
  or SAM id you name goes in `ids`. Name only ids that appear in the state.

When answering:
- Be precise, concise and numerical; prefer short statements over vague text.
- For a comparative or evaluative question, compare numeric values.
- If targets are not collected or not planned, name them and say why (excluded inside a
  known SAM, no drone can sense their type, not in the plan for fuel).
- Never use fluff ("likely", "maybe", "probably") when numbers exist.

When NO plan exists yet: say so clearly and suggest planning first.
Hidden threats are unknown to you: speak only of the known SAMs.

Answer by calling the tool with: answer (the text for the operator), numbers
[{"label", "value", "unit"}], ids (every id named in the answer).
"""


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CitedNumber(_Output):
    """One number the answer states: what it is, its value, its unit."""

    label: str = Field(min_length=1)
    value: float = Field(allow_inf_nan=False)
    unit: str = ""


class ResponderOutput(_Output):
    """The answer for the operator, with the numbers it cites and the ids it names."""

    answer: str = Field(pattern=r"\S", description="the answer, precise and numerical")
    numbers: list[CitedNumber] = Field(
        default_factory=list, description="every number the answer states"
    )
    ids: list[str] = Field(
        default_factory=list, description="every target, drone and SAM id named in the answer"
    )


# appended to the prompt when the responder may call tools (``agents.tools``)
TOOLS_NOTE = """\
TOOLS: you may call the read-only tools offered (mission_overview, drone_state, distance,
plan_metrics) to read what the MISSION STATE does not spell out; each answers
{"ok": true, "data": ...} or {"ok": false, "error": "..."}. Calls are limited: when you have
the numbers, answer with the answer tool. You cannot plan or change the mission.
"""

RESPONDER_TOOL = ToolSpec.for_model(
    "answer", "Give the operator the answer, citing the numbers it rests on.", ResponderOutput
)
