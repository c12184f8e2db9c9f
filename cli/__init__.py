"""The wiring point: the ``isr`` command, the only package that imports every room."""
