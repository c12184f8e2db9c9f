"""An answer being written: its sentences, the numbers it cites, the ids it names.

Every rules answer is built through one ``Answer`` so that each number stated is also cited
(label, value, unit) and each id named is listed, exactly as an engine's answer must do.
"""

from __future__ import annotations

from typing import Any

from agents.responder.role import ResponderOutput

__all__ = ["Answer"]


class Answer:
    """An answer being written: its sentences, the numbers it cites, the ids it names."""

    def __init__(self) -> None:
        """An empty answer."""
        self.lines: list[str] = []
        self.numbers: list[dict[str, Any]] = []
        self.ids: list[str] = []

    def num(self, label: str, value: float, unit: str = "") -> None:
        """Cite ``value`` (rounded to 3 decimals) as ``label`` in ``unit``."""
        self.numbers.append({"label": label, "value": round(float(value), 3), "unit": unit})

    def name(self, *ids: str) -> None:
        """Add ``ids`` to the ids named, each once, in order."""
        self.ids += [i for i in ids if i not in self.ids]

    def done(self) -> dict[str, Any]:
        """The answer as the responder's output (a ``ResponderOutput`` dump)."""
        return ResponderOutput(
            answer=" ".join(self.lines), numbers=self.numbers, ids=self.ids
        ).model_dump()
