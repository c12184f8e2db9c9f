"""The mission model and the planning algorithms: pure, synchronous, deterministic, no IO.

Where things are:

- the mission model -- ``model`` (scenario, drones, solution: pydantic, the seed's JSON),
  ``edits`` (the timeline's stamped changes), ``scenario`` (reading and checking a file),
  ``mission`` (a scenario compiled for the solvers: node indices, SAM-aware distances);
- geometry -- ``geometry`` (exact SAM-avoiding paths: margins, pieces, paths, the SAM field,
  distance tables), ``path_codec`` (paths to JSON and back);
- solvers -- ``team_search`` (all drones at once, anytime; kernels in ``_team``),
  ``orienteering`` (exact single drone; the Held-Karp core in ``_held_karp`` serves both),
  ``allocation`` and ``routing`` (the seed's allocate-then-route strategies), ``postopt``
  (insert, swap, uncross), ``planning`` (a strategy in, a validated Solution out),
  ``constraints`` (operator moves, forbidden pairs, required targets), ``oracle`` (the plan
  made with the whole timeline known);
- checking and reporting -- ``validation`` (the hard constraints every plan must pass),
  ``solution`` (routes to the seed's Solution), ``metrics``, ``plot``;
- ``errors`` -- ``PlannerError``, the root of every error the planner raises on purpose.

Nothing here imports ``sim``, ``executive`` or ``dashboard``.
"""
