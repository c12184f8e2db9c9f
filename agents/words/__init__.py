"""Requests in words: questions answered from the mission state, what-ifs planned on a copy,
and the memories every agent prompt receives."""
