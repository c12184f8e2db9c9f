"""The dashboard's one settings object, built once by ``create_app`` from its arguments.

The ``isr`` CLI (the wiring point) decides the values and passes them to
``start_dashboard`` / ``create_app``; nothing here reads the environment or is built at
import time. Routes get the settings through ``dashboard.deps.SettingsDep``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from dashboard.planning_api import Limits

__all__ = ["DashboardSettings"]


class DashboardSettings(BaseModel):
    """How one dashboard app is configured."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    token: SecretStr = Field(description="guards every commanding endpoint (Bearer)")
    trace_url: str | None = Field(
        None, description="a SQLAlchemy URL: /api/runs reads the trace store there"
    )
    ask_timeout_s: float = Field(30.0, description="how long POST /api/ask waits for an answer")
    max_body_bytes: int = Field(1_000_000, description="the largest request body accepted")
    limits: Limits = Field(
        default_factory=Limits, description="what the stateless planning endpoints accept"
    )
    show_truth: bool = Field(
        False,
        description="exercise control: every reader sees the ground truth (hidden SAMs ...); "
        "otherwise only holders of the token do",
    )
    stall_timeout_s: float = Field(
        15.0,
        gt=0,
        description="a websocket client whose socket has accepted no data for this long is "
        "closed (it stopped reading)",
    )
    max_anonymous_viewers: int = Field(
        500,
        ge=0,
        description="live streams served at once to viewers without the token; one more is "
        "refused (close code 1013, try again later): the token's holders always get in",
    )
    live: bool = Field(
        True,
        description="whether this dashboard serves a live run (or waits for one); False: the "
        "runs of a trace store only (the page opens on the runs list, commands answer 409)",
    )
    idle_timeout_s: float | None = Field(
        None,
        gt=0,
        description="stop the live run when no page has watched it for this long (a fork "
        "started from a dashboard: no orphan runs); None: never",
    )
    back_url: str | None = Field(
        None,
        max_length=2000,
        description="the dashboard that started this run (a fork): the page links back to "
        "its replays there",
    )
