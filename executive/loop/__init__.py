"""The loop and its lifecycle: observe -> decide -> act once per tick (``loop``), the policy
that steers it, cut and freeze (``cut``) and the commands a committed plan becomes."""

from executive.loop.loop import Executive, Replan, RunReport
from executive.loop.policy import TRIGGERS, Policy

__all__ = ["TRIGGERS", "Executive", "Policy", "Replan", "RunReport"]
