"""The fast tier: the algorithmic planner every planning round starts from
(``algorithmic``)."""
