"""Where recon keeps its data, and how it reads `recon.toml`.

The data directory is `--data DIR`, else `$RECON_DATA`, else `./data`. Its layout is a
contract (docs/contracts.md):

    data/
      snapshots/snapshot_date=YYYY-MM-DD/run_id=<id>/part-*.parquet + _manifest.json
      statements/source=<format>/...parquet
      runs/<run_id>/{matches,exceptions}.parquet + summary.json
      inbox/

A data directory given as a URI (`s3://bucket/prefix`, `gs://…`, `abfs://…`) is *remote*:
its snapshots, statement lines and runs are Delta Lake tables under the URI (recon.lake),
and what is only ever used on the machine that runs recon (the writer lock, the inbox,
reports, daily records, decisions, the audit trail, crash logs, a cached copy of the runs
it reads) stays in a local folder, `$RECON_LOCAL_DIR/<store>/<bucket>/<prefix>` (default
`~/.local/state/recon/...`). `DataDir.root` is that local folder, so every path below works
the same for both kinds.
"""

from __future__ import annotations

import os
import secrets
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recon import i18n, lake
from recon.errors import ConfigError

DEFAULT_BUSINESS_TZ = "America/Sao_Paulo"


@dataclass(frozen=True)
class DataDir:
    """The data directory and its well-known sub-folders.

    `uri` is set for a remote data directory (its tables are Delta tables there); `root` is
    then its local side (see the module doc)."""

    root: Path
    uri: str | None = None

    @classmethod
    def resolve(cls, path: str | os.PathLike[str] | None = None) -> DataDir:
        """`path`, else `$RECON_DATA`, else `./data` (made absolute).

        A text that names a scheme (`lake.scheme_of`: ``s3:``, ``gs:``, ``abfs:``, ``az:``,
        ``file:``, any ``name://``) is a URI or a mistake, never a local folder of that
        name: ``file:`` gives the local folder it names, any other a remote data
        directory, checked at once (scheme, credentials, the bucket reachable, with the
        timeouts of recon.toml's ``[storage]``). A mistake is a `recon.lake.LakeError`
        (exit 2) saying what is wrong. This is the one place every command's ``--data``
        (and every API call's `data`) is read."""
        chosen = path or os.environ.get("RECON_DATA") or "data"
        scheme = lake.scheme_of(chosen)
        if scheme == "file":
            return cls(file_path(str(chosen)))
        if scheme is not None:
            loc = lake.parse(str(chosen))
            root = local_root(loc)
            lake.configure(load_config(data=cls(root, loc.uri)).get("storage") or {})
            lake.check(loc)
            return cls(root, loc.uri)
        return cls(Path(chosen).expanduser().resolve())

    @property
    def remote(self) -> bool:
        """Whether the tables live on object storage (Delta Lake) rather than in `root`."""
        return self.uri is not None

    @property
    def location(self) -> lake.Location:
        """The remote location (only for a remote data directory)."""
        if self.uri is None:
            raise ValueError(f"{self.root} is a local data directory")
        return lake.parse(self.uri)

    def table(self, name: str) -> lake.Table:
        """A Delta table of a remote data directory (`recon.lake` names them)."""
        return lake.Table(self.location, name)

    def __str__(self) -> str:
        return self.uri or str(self.root)

    @property
    def snapshots(self) -> Path:
        return self.root / "snapshots"

    @property
    def statements(self) -> Path:
        return self.root / "statements"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    @property
    def inbox(self) -> Path:
        return self.root / "inbox"

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    @property
    def duckdb_path(self) -> Path:
        return self.root / "recon.duckdb"

    @property
    def config_path(self) -> Path:
        return self.root / "recon.toml"

    def ensure(self) -> DataDir:
        for p in (self.snapshots, self.statements, self.runs, self.inbox):
            p.mkdir(parents=True, exist_ok=True)
        return self


def file_path(uri: str) -> Path:
    """The local folder a ``file:`` URI names: ``file:///abs/path``, ``file:/abs/path`` or
    ``file://localhost/abs/path`` (percent-escapes decoded). A relative path or another
    host is a LakeError: ``file://data`` would silently mean a folder nobody asked for."""
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(uri.strip())
    if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
        raise lake.LakeError(
            f"{uri!r} is not a local file URI: write file:///absolute/path (or the path itself)"
        )
    if "?" in uri or "#" in uri:
        raise lake.LakeError(f"{uri!r}: a file URI names a folder (write ? and # as %3F and %23)")
    return Path(unquote(parts.path)).resolve()


def local_root(loc: lake.Location) -> Path:
    """The local side of a remote data directory (see the module doc)."""
    base = os.environ.get("RECON_LOCAL_DIR") or "~/.local/state/recon"
    parts = [loc.store, loc.bucket, *(loc.prefix.split("/") if loc.prefix else [])]
    return Path(base).expanduser().resolve().joinpath(*parts)


def new_run_id(now: datetime | None = None) -> str:
    """A run id that sorts by time: ``20261122T073500123456Z-1a2b``."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    return now.strftime("%Y%m%dT%H%M%S%fZ") + "-" + secrets.token_hex(2)


def load_config(
    path: str | os.PathLike[str] | None = None, data: DataDir | None = None
) -> dict[str, Any]:
    """Read recon.toml: the explicit path, else `./recon.toml`, else `<data>/recon.toml`.

    Returns {} when there is none. Sections are read by the modules that own them
    (e.g. `[reconcile]` by recon.reconciliation.settings).
    """
    candidates: list[Path] = []
    if path is not None:
        candidates.append(Path(path))
    else:
        env = os.environ.get("RECON_CONFIG")
        if env:
            candidates.append(Path(env))
        candidates.append(Path("recon.toml"))
        if data is not None:
            candidates.append(data.config_path)
    for candidate in candidates:
        if candidate.is_file():
            try:
                with candidate.open("rb") as fh:
                    return tomllib.load(fh)
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"{candidate}: not valid TOML: {exc}") from exc
        if path is not None:
            raise ConfigError(f"config file not found: {candidate}")
    return {}


def ui_language(config: dict[str, Any], lang: str | None = None) -> str:
    """The language people are spoken to in: `lang` (a command's --lang), else the one chosen
    for this context (recon.i18n.override, $RECON_LANG), else recon.toml `[ui] language`,
    else Portuguese (Brazil)."""
    if lang or i18n.chosen():
        return i18n.language(lang)
    ui = config.get("ui") or {}
    if not isinstance(ui, dict):
        raise ConfigError("recon.toml [ui] must be a table")
    value = ui.get("language")
    if value is not None and not isinstance(value, str):
        raise ConfigError('recon.toml [ui] language must be a string such as "pt-BR" or "en"')
    return i18n.language(value)
