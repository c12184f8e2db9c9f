"""Requests in words: one dialogue pipeline (``pipeline``) for the live ask, ``isr ask`` and
``POST /api/agent_solve`` (``ask``: a mission state's venue; ``posted``: a posted mission's),
questions answered from the mission state, what-ifs planned on a copy, and the memories
every agent prompt receives."""
