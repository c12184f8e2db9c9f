"""The live web dashboard: FastAPI app, websocket streams, REST API and the page.

``dashboard.server.start_dashboard(bus, ...)`` serves ``dashboard.app.create_app(bus, ...)``
in the caller's event loop, ``dashboard.process.start_dashboard_process`` from a process of
its own fed over a socket pair (``isr run``: the mission never waits on its viewers); the
``isr`` command (``cli``, the wiring point) plugs them into ``isr run`` and ``isr dashboard
--mqtt``. The dashboard talks to the executive only through
the bus (``executive.bus``): it never reaches into the sim.

Inside: ``app`` builds the app from one ``settings.DashboardSettings`` and one
``context.DashboardContext``; ``routes`` holds the routers, ``deps`` what they depend on,
``errors`` the one mapping from errors to answers; ``live_view`` mirrors the run and
``streams`` serves ``/ws/live``; ``planning_api`` is the work of the stateless planning
endpoints; ``static`` the page (ES modules, no build step).
"""
