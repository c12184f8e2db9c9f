"""The planning round's slow tier: the agent chain next to the algorithmic planner
(``round``: ``AgentPlanner``) and the checks an agent's proposal passes before it can
replace the baseline (``proposals``)."""
