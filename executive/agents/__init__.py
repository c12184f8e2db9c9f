"""The agents: what each one is asked, what it must answer, and the deterministic answers.

``context`` (the hard constraints, the memories, the mission as text: what every prompt is
built from), ``roles`` (the planning round's strategist, allocator and critic: prompts,
output models, tools generated from them, rules answers), ``revision`` (the critic acts:
its concrete suggestions tried once, kept only if valid and better), ``coordinator`` (the
deterministic pre-pass over the operator's words: intent, policy, constraints, refusals,
what-ifs, memories) and ``responder`` (answers the operator from the mission state, with
the numbers). The
engines that answer them are in ``executive.engines``; the planning round that chains them
is ``executive.planning.round``.
"""
