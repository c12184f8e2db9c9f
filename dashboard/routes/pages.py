"""The page, its static files and the API docs, all served from this package (no CDN).

``GET /`` is ``static/index.html`` (never cached: it names the modules to load);
``/static/*`` the page's ES modules, style and icon; ``GET /docs`` Swagger UI 5 (it reads
the OpenAPI 3.1 that FastAPI emits; the 4.x of the ``swagger-ui-bundle`` package could not),
vendored from npm's ``swagger-ui-dist`` in ``static/swagger/``, mounted at ``/docs-static``,
started by ``static/docs.js`` (no inline script: the docs have their own CSP,
``security.DOCS_CSP``).
"""

from __future__ import annotations

import html
import os
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import Scope

from dashboard.security import DOCS_CSP

__all__ = ["STATIC", "SWAGGER_UI", "PageFiles", "mount_static", "router"]

STATIC = Path(__file__).resolve().parents[1] / "static"
SWAGGER_UI = STATIC / "swagger"  # swagger-ui-dist 5.x, vendored (see its README.md)

router = APIRouter()


class PageFiles(StaticFiles):
    """The page's files: ES modules always as ``text/javascript`` (a browser refuses a
    module script of another type, whatever the host's MIME table says), revalidated on each
    load so that a page never mixes modules of two versions."""

    JS_SUFFIXES = (".js", ".mjs")

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        """The file as StaticFiles answers it (or its 304), typed and revalidated if a module."""
        response = super().file_response(full_path, stat_result, scope, status_code)
        if str(full_path).endswith(self.JS_SUFFIXES):
            if response.status_code != 304:
                response.headers["content-type"] = "text/javascript; charset=utf-8"
            response.headers["cache-control"] = "no-cache"
        return response


def mount_static(app: FastAPI) -> None:
    """Mount the page's files at ``/static`` and Swagger UI's at ``/docs-static``."""
    app.mount("/static", PageFiles(directory=STATIC), name="static")
    # Swagger UI from this repository, not a CDN: /docs works with no internet, like the page.
    app.mount("/docs-static", StaticFiles(directory=SWAGGER_UI), name="docs-static")


@router.get("/", include_in_schema=False)
async def page() -> FileResponse:
    """The dashboard's page."""
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


_DOCS_PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>{title}</title>
  <link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
  <link rel="stylesheet" href="/docs-static/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui" data-openapi-url="{openapi_url}"></div>
  <script src="/docs-static/swagger-ui-bundle.js"></script>
  <script src="/static/docs.js"></script>
</body>
</html>
"""


@router.get("/docs", include_in_schema=False)
async def docs(request: Request) -> HTMLResponse:
    """Swagger UI for this app's OpenAPI document, from local files."""
    app: FastAPI = request.app
    page = _DOCS_PAGE.format(
        title=html.escape(f"{app.title} — API"),
        openapi_url=html.escape(app.openapi_url or "/openapi.json"),
    )
    return HTMLResponse(page, headers={"Content-Security-Policy": DOCS_CSP})
