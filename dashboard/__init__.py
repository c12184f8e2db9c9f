"""The live web dashboard: FastAPI app, websocket streams, REST API and the page.

``dashboard.server.start_dashboard(bus, ...)`` serves ``dashboard.app.create_app(bus, ...)``
in the caller's event loop; ``dashboard.cli.main`` is the ``isr`` entry point with the
dashboard plugged into ``isr run`` and ``isr dashboard --mqtt``. The dashboard talks to the
executive only through the bus (``executive.bus``): it never reaches into the sim.
"""
