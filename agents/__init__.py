"""The dialogue stack: the agents, what each one is asked, what it must answer, and the
deterministic answers; above the real-time core (``executive``), which never imports it.

``context`` (the hard constraints, the memories, the mission as text: what every prompt is
built from), ``roles`` (the planning round's strategist, allocator and critic: prompts,
output models, tools generated from them, rules answers), ``revision`` (the critic acts:
its concrete suggestions tried once, kept only if valid and better), ``coordinator`` (the
deterministic pre-pass over the operator's words: intent, policy, constraints, refusals,
what-ifs, memories), ``responder`` (answers the operator from the mission state, with the
numbers), ``words`` (questions, what-ifs, memories, lessons), ``engines`` (rules,
anthropic, openai, replay: what answers the agents) and ``planning`` (the planning round's
slow tier: the agent chain next to the algorithmic planner).
"""
