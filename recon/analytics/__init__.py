"""recon.analytics: how the flows convert and where they leak, as pandas DataFrames.

Reads the catalog (`recon.catalog`) through DuckDB SQL (`recon/analytics/sql/*.sql`) and
returns pandas. Every function takes `data` (a data directory, a DataDir, a connection from
`connect`, or None for ./data / $RECON_DATA).

    funnel(data, intent_type="onramp", cohort="day")   share of a cohort reaching each stage
    expiry_rates(data, by="cohort"|"amount"|"hour"|"weekday")   with Wilson CIs and censoring
    time_to_pay / time_to_complete + duration_summary   median, p90
    volumes, status_reasons, failures, intent_outcomes, status_history
    breaks, break_aging                                  the latest run's exceptions

Charts for these frames are in `recon.charts`; `recon.ops.demo.ensure_demo_data` builds a
sandbox data directory when there is no data yet.
"""

from __future__ import annotations

from recon.analytics._connect import AnalyticsConfig, connect, load_analytics_config
from recon.analytics.break_review import (
    break_aging,
    breaks,
    breaks_by_category,
    control_totals,
    matches_by_rule,
    run_overview,
    run_summary,
)
from recon.analytics.metrics import (
    duration_summary,
    expiry_rates,
    failures,
    funnel,
    intent_outcomes,
    status_history,
    status_reasons,
    time_to_complete,
    time_to_pay,
    volumes,
)
from recon.analytics.stats import wilson_interval

__all__ = [
    "AnalyticsConfig",
    "break_aging",
    "breaks",
    "breaks_by_category",
    "connect",
    "control_totals",
    "duration_summary",
    "expiry_rates",
    "failures",
    "funnel",
    "intent_outcomes",
    "load_analytics_config",
    "matches_by_rule",
    "run_overview",
    "run_summary",
    "status_history",
    "status_reasons",
    "time_to_complete",
    "time_to_pay",
    "volumes",
    "wilson_interval",
]
