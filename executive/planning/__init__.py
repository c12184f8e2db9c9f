"""Planning rounds: the algorithmic planner (the fast tier), the agent chain next to it, and
the checks an agent's proposal passes before it can replace the baseline."""
