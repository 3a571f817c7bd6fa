"""Connections for analytics: the catalog views plus the configured lifecycle order.

Analytics read the catalog (`recon.catalog.connect`) and add, on the same connection:

- the lifecycle order from recon.toml `[analytics]` (replacing the default `lifecycle_order`
  view, which `status_history` joins; DuckDB binds views late, so it follows the override);
- `analytics_intents`: one row per intent as last observed, with its business-tz creation
  time, the furthest lifecycle stage it is known to have reached, and its outcome.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import duckdb
import pandas as pd
import pyarrow as pa

from recon import catalog
from recon.config import DEFAULT_BUSINESS_TZ, DataDir, load_config
from recon.engine.base import Engine, rows_table
from recon.errors import ConfigError
from recon.schemas import INTENT_STATUSES, OFFRAMP_LIFECYCLE, ONRAMP_LIFECYCLE, TERMINAL_EXITS

# a data dir, a DuckDB catalog connection, or an engine with the catalog registered
# (recon.catalog.register: the Spark engine)
DataLike = str | os.PathLike[str] | DataDir | duckdb.DuckDBPyConnection | Engine | None

INTENT_TYPES = ("onramp", "offramp")

# Which stage an exit proves was reached even when no snapshot saw it: an onramp expires
# only from awaiting_fiat_payment (unpaid at expires_at) and is refunded only after the
# fiat arrived; an offramp expires waiting for burn approval and is refunded only after the
# tokens arrived. Overridable in recon.toml ([analytics.onramp_exit_implies] etc.).
DEFAULT_EXIT_IMPLIES: dict[str, dict[str, str]] = {
    "onramp": {"expired": "awaiting_fiat_payment", "refunded": "fiat_received"},
    "offramp": {"expired": "awaiting_burn_approval", "refunded": "onchain_received"},
}
# Stages an intent may skip (docs/emulator.md, lifecycles: `[requires_compliance]`). The funnel leaves them
# out by default: with "a later stage counts as passing the earlier ones" an optional stage
# would otherwise look passed by every intent that skipped it.
DEFAULT_OPTIONAL_STAGES = ("requires_compliance",)
# The stage whose entry means "the customer paid": fiat for an onramp, tokens for an offramp.
DEFAULT_PAY_STAGE = {"onramp": "fiat_received", "offramp": "onchain_received"}


@dataclass(frozen=True)
class AnalyticsConfig:
    """Lifecycle order and business settings used by recon.analytics (recon.toml `[analytics]`)."""

    lifecycles: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: {"onramp": ONRAMP_LIFECYCLE, "offramp": OFFRAMP_LIFECYCLE}
    )
    terminal_exits: tuple[str, ...] = TERMINAL_EXITS
    optional_stages: tuple[str, ...] = DEFAULT_OPTIONAL_STAGES
    exit_implies: Mapping[str, Mapping[str, str]] = field(
        default_factory=lambda: {k: dict(v) for k, v in DEFAULT_EXIT_IMPLIES.items()}
    )
    pay_stage: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_PAY_STAGE))
    business_tz: str = DEFAULT_BUSINESS_TZ

    def lifecycle(self, intent_type: str) -> tuple[str, ...]:
        """The happy-path stages of `intent_type`, in order."""
        try:
            return self.lifecycles[intent_type]
        except KeyError:
            raise ConfigError(
                f"unknown intent_type {intent_type!r}; expected one of {sorted(self.lifecycles)}"
            ) from None

    def funnel_stages(self, intent_type: str) -> tuple[str, ...]:
        """The lifecycle without the optional stages."""
        return tuple(s for s in self.lifecycle(intent_type) if s not in self.optional_stages)

    @classmethod
    def from_mapping(cls, cfg: Mapping[str, Any]) -> AnalyticsConfig:
        """Build from a parsed recon.toml (reads `[analytics]`, falls back to `[reconcile]` tz)."""
        section = cfg.get("analytics", {}) or {}
        if not isinstance(section, Mapping):
            raise ConfigError("recon.toml [analytics] must be a table")
        base = cls()
        lifecycles = dict(base.lifecycles)
        for it in INTENT_TYPES:
            key = f"{it}_lifecycle"
            if key in section:
                lifecycles[it] = _status_list(section[key], key)
        exits = (
            _status_list(section["terminal_exits"], "terminal_exits")
            if "terminal_exits" in section
            else base.terminal_exits
        )
        optional = (
            _status_list(section["optional_stages"], "optional_stages")
            if "optional_stages" in section
            else base.optional_stages
        )
        implies = {k: dict(v) for k, v in base.exit_implies.items()}
        pay = dict(base.pay_stage)
        for it in INTENT_TYPES:
            key = f"{it}_exit_implies"
            if key in section:
                value = section[key]
                if not isinstance(value, Mapping):
                    raise ConfigError(f"recon.toml [analytics] {key} must be a table")
                implies[it] = {str(k): str(v) for k, v in value.items()}
            if f"{it}_pay_stage" in section:
                pay[it] = str(section[f"{it}_pay_stage"])
        tz = section.get("business_tz") or (cfg.get("reconcile", {}) or {}).get("business_tz")
        out = cls(
            lifecycles=lifecycles,
            terminal_exits=exits,
            optional_stages=optional,
            exit_implies=implies,
            pay_stage=pay,
            business_tz=str(tz or DEFAULT_BUSINESS_TZ),
        )
        out.validate()
        return out

    def validate(self) -> None:
        """Raise ConfigError when the order names unknown statuses or contradicts itself."""
        try:
            ZoneInfo(self.business_tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"unknown business_tz {self.business_tz!r}") from None
        for it, stages in self.lifecycles.items():
            if not stages:
                raise ConfigError(f"{it}_lifecycle is empty")
            if len(set(stages)) != len(stages):
                raise ConfigError(f"{it}_lifecycle lists a status twice: {list(stages)}")
            clash = set(stages) & set(self.terminal_exits)
            if clash:
                raise ConfigError(f"{it}_lifecycle holds terminal exits: {sorted(clash)}")
            for exit_status, stage in self.exit_implies.get(it, {}).items():
                if exit_status not in self.terminal_exits or stage not in stages:
                    raise ConfigError(
                        f"{it}_exit_implies: {exit_status!r} -> {stage!r} must map an exit to"
                        f" a stage of the {it} lifecycle"
                    )
            if self.pay_stage.get(it) not in stages:
                raise ConfigError(f"{it}_pay_stage {self.pay_stage.get(it)!r} not in lifecycle")

    def to_json(self) -> str:
        """JSON text of the settings (stored on a connection by `install`)."""
        return json.dumps(
            {
                "lifecycles": {k: list(v) for k, v in self.lifecycles.items()},
                "terminal_exits": list(self.terminal_exits),
                "optional_stages": list(self.optional_stages),
                "exit_implies": {k: dict(v) for k, v in self.exit_implies.items()},
                "pay_stage": dict(self.pay_stage),
                "business_tz": self.business_tz,
            }
        )

    @classmethod
    def from_json(cls, text: str) -> AnalyticsConfig:
        """Inverse of `to_json`."""
        d = json.loads(text)
        return cls(
            lifecycles={k: tuple(v) for k, v in d["lifecycles"].items()},
            terminal_exits=tuple(d["terminal_exits"]),
            optional_stages=tuple(d["optional_stages"]),
            exit_implies=d["exit_implies"],
            pay_stage=d["pay_stage"],
            business_tz=d["business_tz"],
        )

    def lifecycle_rows(self) -> list[tuple[str, str, int | None, str, int | None]]:
        """(intent_type, status, stage_rank, kind, implied_stage_rank) rows."""
        rows: list[tuple[str, str, int | None, str, int | None]] = []
        for it, stages in self.lifecycles.items():
            rank = {s: i for i, s in enumerate(stages, start=1)}
            rows.extend((it, s, rank[s], "stage", None) for s in stages)
            implies = self.exit_implies.get(it, {})
            rows.extend(
                (it, e, None, "exit", rank[implies[e]] if e in implies else None)
                for e in self.terminal_exits
            )
        return rows


def _status_list(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"recon.toml [analytics] {key} must be a list of status names")
    unknown = [v for v in value if v not in INTENT_STATUSES]
    if unknown:
        raise ConfigError(f"recon.toml [analytics] {key}: unknown statuses {unknown}")
    return tuple(value)


def load_analytics_config(data: DataDir | None = None) -> AnalyticsConfig:
    """The `[analytics]` settings of recon.toml (./recon.toml, $RECON_CONFIG or <data>/recon.toml)."""
    return AnalyticsConfig.from_mapping(load_config(data=data))


def read_sql(name: str) -> str:
    """The text of `recon/analytics/sql/<name>.sql`."""
    return (resources.files("recon.analytics") / "sql" / f"{name}.sql").read_text(encoding="utf-8")


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def install(con: duckdb.DuckDBPyConnection, config: AnalyticsConfig) -> None:
    """Add the configured lifecycle order and the analytics views to a catalog connection."""
    config.validate()
    con.execute(
        "CREATE OR REPLACE TABLE analytics_lifecycle_order (intent_type VARCHAR, status VARCHAR,"
        " stage_rank INTEGER, kind VARCHAR, implied_stage_rank INTEGER)"
    )
    con.executemany(
        "INSERT INTO analytics_lifecycle_order VALUES (?, ?, ?, ?, ?)", config.lifecycle_rows()
    )
    con.execute(
        "CREATE OR REPLACE VIEW lifecycle_order AS"
        " SELECT intent_type, status, stage_rank, kind FROM analytics_lifecycle_order"
    )
    con.execute("CREATE OR REPLACE TABLE analytics_settings (config_json VARCHAR)")
    con.execute("INSERT INTO analytics_settings VALUES (?)", [config.to_json()])
    # The time zone is validated above and is the only text formatted into SQL here.
    con.execute(read_sql("analytics_intents").format(tz=_sql_literal(config.business_tz)))


_LIFECYCLE_SCHEMA = pa.schema(
    [("intent_type", pa.string()), ("status", pa.string()), ("stage_rank", pa.int32()),
     ("kind", pa.string()), ("implied_stage_rank", pa.int32())]
)  # fmt: skip


def install_on_engine(engine: Engine, config: AnalyticsConfig) -> None:
    """`install` on an engine (Spark): the same tables and views, the same SQL text."""
    config.validate()
    engine.register_arrow(
        "analytics_lifecycle_order", rows_table(config.lifecycle_rows(), _LIFECYCLE_SCHEMA)
    )
    engine.run_view_file(
        "lifecycle_order",
        "CREATE OR REPLACE VIEW lifecycle_order AS"
        " SELECT intent_type, status, stage_rank, kind FROM analytics_lifecycle_order",
    )
    text = read_sql("analytics_intents").format(tz=_sql_literal(config.business_tz))
    engine.run_view_file("analytics_intents.sql", text)
    setattr(engine, _CONFIG_ATTRIBUTE, config)


_CONFIG_ATTRIBUTE = "analytics_config"


def connect(
    data: str | os.PathLike[str] | DataDir | None = None, *, config: AnalyticsConfig | None = None
) -> duckdb.DuckDBPyConnection:
    """A catalog connection (`recon.catalog.connect`) with the analytics views installed.

    `config` defaults to recon.toml `[analytics]`. The extra views are `lifecycle_order`
    (configured), `analytics_intents` (one row per intent as last observed).
    """
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    cfg = config or load_analytics_config(dd)
    con = catalog.connect(dd)
    install(con, cfg)
    return con


@contextlib.contextmanager
def connection(
    data: DataLike, config: AnalyticsConfig | None = None
) -> Iterator[tuple[duckdb.DuckDBPyConnection, AnalyticsConfig]]:
    """Use `data` if it is a connection from `connect` (or an engine with the catalog
    registered), else open (and close) a DuckDB one."""
    if data is not None and not isinstance(
        data, (duckdb.DuckDBPyConnection, str, os.PathLike, DataDir)
    ):
        engine: Any = data
        installed = getattr(engine, _CONFIG_ATTRIBUTE, None)
        cfg = config or installed or AnalyticsConfig()
        if cfg is not installed:
            install_on_engine(engine, cfg)
        yield engine, cfg
        return
    if isinstance(data, duckdb.DuckDBPyConnection):
        if config is not None:
            install(data, config)
            yield data, config
            return
        try:
            rows = data.execute("SELECT config_json FROM analytics_settings").fetchall()
        except duckdb.CatalogException:
            rows = []
        if not rows:  # a bare catalog connection: install the defaults
            cfg = AnalyticsConfig()
            install(data, cfg)
        else:
            cfg = AnalyticsConfig.from_json(rows[0][0])
        yield data, cfg
        return
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    cfg = config or load_analytics_config(dd)
    con = connect(dd, config=cfg)
    try:
        yield con, cfg
    finally:
        con.close()


def query(
    con: duckdb.DuckDBPyConnection | Engine,
    sql_text: str,
    params: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """Run SQL and return pandas (through Arrow: keeps UTC-aware timestamps and int64)."""
    if not isinstance(con, duckdb.DuckDBPyConnection):
        table = con.reader(sql_text, dict(params) if params else None).read_all()
        return table.to_pandas(date_as_object=False)
    rel = con.sql(sql_text, params=dict(params)) if params else con.sql(sql_text)
    return rel.to_arrow_table().to_pandas(date_as_object=False)
