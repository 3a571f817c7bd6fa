"""moto's S3 server on loopback, in a process of its own, for the object-storage tests.

Run as ``python s3_server.py PORT FAULTS_DIR``. It is a child process, not a thread of the
test process: deltalake holds the GIL while it waits on some requests (reading a table's
history), so a server thread inside the same interpreter could never answer them.

Fault switch: while the file ``FAULTS_DIR/fail-commits`` exists, every PUT of a Delta commit
entry (``…/_delta_log/<20 digits>.json``) is refused with 403 after the writer has uploaded its
data files: a writer that dies between its data and its commit, at the storage itself. When
the file holds text, only the commits of tables whose path contains it are refused.

While the file ``FAULTS_DIR/fail-requests`` exists, every request whose method and path match
one of its lines (``METHOD REGEX``, e.g. ``DELETE /snapshots/``) is refused with 403: a store
that fails any step (an upload, a rewrite of an existing object, a delete) part-way through.
"""

from __future__ import annotations

import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from moto.core import serialize
from moto.moto_server.werkzeug_app import MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server

_COMMIT = re.compile(r"/_delta_log/\d{20}\.json$")
_DENIED = (
    b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>'
    b"<Message>commit refused by the test's fault switch</Message></Error>"
)


def _matches(switch: Path, method: str, path: str) -> bool:
    """Whether a line ``METHOD REGEX`` of the switch file matches the request."""
    try:
        rules = switch.read_text().splitlines()
    except OSError:
        return False
    for rule in rules:
        verb, _, pattern = rule.strip().partition(" ")
        if verb == method and re.search(pattern.strip(), path):
            return True
    return False


def _refuse(faults: Path, path: str, start_response: Any) -> list[bytes]:
    with (faults / "refused.log").open("a") as log:
        log.write(path + "\n")
    start_response("403 Forbidden", [("Content-Type", "application/xml")])
    return [_DENIED]


def _quick_timestamps() -> None:
    """moto parses every timestamp it writes into a reply with dateutil (1-2 ms each, half
    the time of a LIST, which Delta Lake sends on every table it opens); its own ISO 8601
    texts parse as well with the standard library. Anything else goes to moto's parser."""
    slow = serialize.parse_to_aware_datetime

    def parse(value: Any) -> datetime:
        if isinstance(value, str):
            try:
                parsed = datetime.fromisoformat(value)
            except ValueError:
                return slow(value)
            if parsed.tzinfo is not None:
                return parsed
        return slow(value)

    serialize.parse_to_aware_datetime = parse


def main() -> None:
    port, faults = int(sys.argv[1]), Path(sys.argv[2])
    _quick_timestamps()
    # S3 only: moto's dispatcher would work out the service of every request anew (listing
    # its own package's folders each time)
    moto = create_backend_app("s3")

    def app(environ: dict[str, Any], start_response: Any) -> Any:
        path = environ.get("PATH_INFO", "")
        switch = faults / "fail-commits"
        if (
            environ.get("REQUEST_METHOD") == "PUT"
            and _COMMIT.search(path)
            and switch.exists()
            and switch.read_text().strip() in path
        ):
            return _refuse(faults, path, start_response)
        if _matches(faults / "fail-requests", environ.get("REQUEST_METHOD", ""), path):
            return _refuse(faults, path, start_response)
        return moto(environ, start_response)

    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=MotoRequestHandler)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
