"""Run composition: one typed run configuration (``config``), a run built and flown from it
(``session``), the live host that wires a run to a bus (``live``) and batch evaluation
(``evaluation``)."""
