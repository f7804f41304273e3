"""POST a request to a local HTTP route and read its JSON answer, an HTTP error's
``{"error": reason}`` kept for the caller to word its own refusal."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

__all__ = ["HttpRefused", "post_json"]


class HttpRefused(Exception):
    """The route answered an HTTP error: its code and the ``"error"`` of its body, if any."""

    def __init__(self, code: int, reason: str | None) -> None:
        super().__init__(reason or f"HTTP {code}")
        self.code = code
        self.reason = reason


def post_json(request: urllib.request.Request, timeout: float) -> Any:
    """The JSON answer to ``request`` (``{}`` when empty). Raises :class:`HttpRefused` for an
    HTTP error, ``OSError`` or ``ValueError`` when there is no readable answer."""
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        try:
            reason = json.loads(error.read() or b"{}").get("error")
        except (ValueError, AttributeError):
            reason = None
        raise HttpRefused(error.code, reason) from None
