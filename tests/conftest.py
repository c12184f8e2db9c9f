"""Shared fixtures: scenario paths and loaders, a seeded rng."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "scenarios"


@pytest.fixture
def demo_path() -> Path:
    return SCENARIOS / "demo.json"


@pytest.fixture
def demo_data(demo_path) -> dict:
    return json.loads(demo_path.read_text())


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)
