"""recon.review: the break-review workspace (`recon review`), its commands and notifications.

create_app(data=None, *, settings=None) -> Starlette app        (recon.review.app)
`recon review [--host 127.0.0.1] [--port 8710]`, `recon review adduser NAME --role ROLE`,
`recon audit verify`; notify_run(...) after `recon daily`        (recon.review.notify)
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    # the web stack loads only when the app is asked for (notifications do not need it)
    if name == "create_app":
        from recon.review.app import create_app

        return create_app
    raise AttributeError(f"module 'recon.review' has no attribute {name!r}")
