"""The loop and its lifecycle: observe -> decide -> act once per tick (``loop``), the policy
that steers it and the options it is run with, cut and freeze (``cut``) and the commands a
committed plan becomes."""

from executive.loop.loop import Executive, Replan, RunReport
from executive.loop.options import LoopOptions
from executive.loop.policy import TRIGGERS, Policy

__all__ = ["TRIGGERS", "Executive", "LoopOptions", "Policy", "Replan", "RunReport"]
