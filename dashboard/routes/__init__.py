"""The dashboard's routers, one module per area; ``create_app`` includes them in this order.

- ``pages``: the page (``/``), its static files, and the offline API docs (``/docs``).
- ``live``: the mirror of the live run (``/api/state``, ``events``, ``agents``, ``clients``,
  ``health``), open to read.
- ``runs``: recorded runs from the trace store (``/api/runs``).
- ``commands``: commands, edits, speed and questions for the live run, behind the token.
- ``planning``: the seed's stateless planning endpoints (``dashboard.planning_api``).
- ``stream``: the ``/ws/live`` websocket (``dashboard.streams``).
"""

from dashboard.routes import commands, live, pages, planning, runs, stream

__all__ = ["commands", "live", "pages", "planning", "runs", "stream"]
