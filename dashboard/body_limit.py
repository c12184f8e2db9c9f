"""An ASGI middleware that caps the size of every HTTP request body.

A declared ``Content-Length`` above the limit is refused at once; a chunked body is read
here up to the limit and handed on whole. The refusal is ``errors.BodyTooLarge`` (413, the
dashboard's usual JSON error body). Websocket connections pass through untouched.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dashboard.errors import BodyTooLarge

__all__ = ["BodyLimit"]


class BodyLimit:
    """Refuse request bodies above ``limit`` bytes with a 413, declared or streamed."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None:
            if declared.isdigit() and int(declared) > self.limit:
                return await BodyTooLarge(self.limit).response()(scope, receive, send)
            return await self.app(scope, receive, send)
        # No length given (chunked): read it here, up to the limit, then hand it on whole.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                return await BodyTooLarge(self.limit).response()(scope, receive, send)
            if not message.get("more_body", False):
                break
        replayed = False

        async def replay() -> Message:
            """The body read here, whole, then whatever the client sends next."""
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
