"""``python -m cli`` is ``isr``."""

from cli.main import main

main()
