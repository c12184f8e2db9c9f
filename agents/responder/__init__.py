"""The responder (seed 000 §4.5, Appendix A.6): answers the operator from the state, with
the numbers.

Like the planning round's roles: the system prompt (A.6 adapted to a mission in flight,
with the hard constraints and the memories injected), the tool whose input is the answer
(``answer``, the ``numbers`` it cites, the ``ids`` it names), a pydantic model
(``extra="forbid"``) that parses it, and a deterministic rules answer over a
``MissionState`` for the common questions -- fuel margins, points so far / planned, targets
not collected or unassigned, where a drone is and what it does, why a target is excluded or
not visited, the mission's status, the known SAMs -- and for a what-if's difference.

``respond(...)`` runs one responder call through an ``Engine`` (rules: the deterministic
answer; anthropic: tool use), raced against ``timeout_s``. The reply is validated (schema,
then every id it names must be known: an answer about a target that does not exist is not
passed on); on any failure the rules answer stands and the reason is in the traced
``AgentRunRecord`` (``error``, ``applied=False``).

Modules, one idea each: ``role`` (prompt, output model, tool), ``context`` (the state as the
prompt's text), ``questions`` (which topic a question is about), ``answers`` (the rules
answer per topic), ``call`` (the engine call and its checks).
"""

from __future__ import annotations

from agents.responder.answers import responder_rules
from agents.responder.call import Responded, respond
from agents.responder.context import state_context
from agents.responder.role import (
    RESPONDER_PROMPT,
    RESPONDER_TOOL,
    CitedNumber,
    ResponderOutput,
)

__all__ = [
    "RESPONDER_PROMPT",
    "RESPONDER_TOOL",
    "CitedNumber",
    "Responded",
    "ResponderOutput",
    "respond",
    "responder_rules",
    "state_context",
]
