"""Numba kernels of the team orienteering search (see :mod:`planner.team_search`).

A solution is four arrays (``seq``, ``L``, ``rlen``, ``where``, see
:mod:`planner._team.solution`); every kernel works on them in place. The modules, in the
order a search iteration uses them:

- ``solution`` -- the arrays' contract and the small operations every move uses (route
  length, best insertion, copy);
- ``rng`` -- the xorshift64 random numbers, whose state is carried across chunks;
- ``ruin`` -- the perturbation: remove some free targets (five operators);
- ``repair`` -- the recreation: greedy insertion of unrouted targets;
- ``moves`` -- the local search: 2-opt, or-opt, relocation, exchange, replacement;
- ``search`` -- the driver: construction, local search to a fixed point, and chunks of
  simulated-annealing iterations with their state slots;
- ``exact`` -- the optimal team plan when few targets are usable (Held-Karp per vehicle,
  :mod:`planner._held_karp`, then a DP over vehicles).

Every kernel draws its random numbers from a xorshift64 state held in a uint64 array, so a
run is a pure function of its inputs and the number of iterations, however it is chunked.
Kernels are compiled with ``cache=True, nogil=True``; ``planner.team_search.warmup()``
loads them before time matters. numba's on-disk cache does not notice a change in a kernel
*another* module calls: after editing one of these modules, delete the ``__pycache__``
folders of ``planner/_team`` (and of ``planner`` for ``_held_karp``) so its callers
recompile.
"""
