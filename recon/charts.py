"""Matplotlib charts of recon's analytics frames; each takes `ax=` and returns the Axes.

Every chart draws the DataFrame a `recon.analytics` function returns (or `recon_exceptions`
rows for the break charts), labels its axes, gives itself a title and formats money as BRL
(R$ 1.234,56). None calls `plt.show()`: a notebook shows the figure, the HTML report saves
it. With `ax=None` a new figure is made with pyplot; pass an Axes of your own figure (e.g.
`matplotlib.figure.Figure().subplots()`) to stay off pyplot's global state.

    funnel_bars(funnel_df)                 share of the cohort reaching each stage
    cohort_heatmap(funnel_df)              cohort × stage share
    expiry_rate_lines(expiry_df)           expiry rate with Wilson band and the censored share
    time_to_pay_hist(durations_df)         distribution with median and p90
    volume_bars(volumes_df)                BRL volume per cohort by outcome
    break_aging(exceptions_df)             categories × age buckets (stacked bars)
    breaks_by_category(exceptions_df)      breaks and money at stake per category
    control_totals_bars(control_df)        intents vs statement per business day (BRL)
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.ticker import FuncFormatter, MaxNLocator, PercentFormatter

from recon.analytics import break_review as _breaks
from recon.errors import UsageError
from recon.money import format_brl

__all__ = [
    "break_aging",
    "break_table",
    "breaks_by_category",
    "brl_axis",
    "cohort_heatmap",
    "control_totals_bars",
    "expiry_rate_lines",
    "funnel_bars",
    "time_to_pay_hist",
    "volume_bars",
]

_COLOURS = {
    "completed": "#2b8a3e",
    "expired": "#c92a2a",
    "other_exit": "#e67700",
    "still_open": "#868e96",
    "main": "#1c7ed6",
}
_AGE_COLOURS = ("#d0ebff", "#74c0fc", "#339af0", "#1971c2", "#e8590c", "#c92a2a")


def _axes(ax: Axes | None, figsize: tuple[float, float] = (8, 4)) -> Axes:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _fig, new = plt.subplots(figsize=figsize)
    return new


def _need(df: pd.DataFrame, columns: list[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise UsageError(f"{what} needs columns {missing}")


def _empty(ax: Axes, title: str) -> Axes:
    ax.set_title(title)
    ax.text(0.5, 0.5, "no data", ha="center", va="center", transform=ax.transAxes)
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def _brl_tick(value: float, _pos: Any = None) -> str:
    return format_brl(round(value))


def brl_axis(ax: Axes, axis: str = "y") -> Axes:
    """Format an axis whose values are cents as BRL (R$ 1.234,56)."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(FuncFormatter(_brl_tick))
    return ax


def _type_title(df: pd.DataFrame, text: str) -> str:
    if "intent_type" in df.columns and df["intent_type"].nunique() == 1:
        return f"{str(df['intent_type'].iloc[0]).capitalize()} {text}"
    return text[:1].upper() + text[1:]


def _cohort_label(value: Any) -> str:
    if isinstance(value, pd.Timestamp | np.datetime64):
        return pd.Timestamp(value).strftime("%Y-%m-%d")
    return str(value)


def funnel_bars(funnel: pd.DataFrame, ax: Axes | None = None, *, title: str | None = None) -> Axes:
    """Horizontal bars: share of the cohort(s) reaching each stage, with counts and drop-off.

    Takes `recon.analytics.funnel(...)`; several cohorts are pooled (reached and cohort sizes
    summed per stage).
    """
    _need(funnel, ["stage", "step", "reached", "cohort_size"], "funnel_bars")
    ax = _axes(ax)
    title = title or _type_title(funnel, "funnel: share of intents reaching each stage")
    if funnel.empty:
        return _empty(ax, title)
    pooled = (
        funnel.groupby(["step", "stage"], sort=True)[["reached", "cohort_size"]].sum().reset_index()
    )
    share = pooled["reached"] / pooled["cohort_size"]
    y = np.arange(len(pooled))
    ax.barh(y, share, color=_COLOURS["main"])
    ax.set_yticks(y, labels=list(pooled["stage"]))
    ax.invert_yaxis()  # first stage on top
    previous = pooled["reached"].shift(1).fillna(pooled["cohort_size"])
    for i, (n, s, prev) in enumerate(zip(pooled["reached"], share, previous, strict=True)):
        drop = f"  (−{1 - n / prev:.0%} vs previous step)" if prev and n < prev else ""
        ax.text(min(s, 1.0) + 0.01, i, f"{int(n):,} · {s:.0%}{drop}", va="center", fontsize=8)
    ax.set_xlim(0, 1.55)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.xaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel(f"share of intents created (n = {int(pooled['cohort_size'].iloc[0]):,})")
    ax.set_ylabel("stage")
    ax.set_title(title)
    return ax


def cohort_heatmap(
    funnel: pd.DataFrame,
    ax: Axes | None = None,
    *,
    value: str = "share",
    title: str | None = None,
) -> Axes:
    """Cohort × stage heatmap of `value` (default: share reaching the stage), annotated."""
    _need(funnel, ["cohort", "stage", "step", value], "cohort_heatmap")
    ax = _axes(ax, (9, 5))
    title = title or _type_title(funnel, "cohorts: share reaching each stage")
    if funnel.empty:
        return _empty(ax, title)
    stages = funnel.sort_values("step").drop_duplicates("stage")["stage"].tolist()
    table = funnel.pivot_table(index="cohort", columns="stage", values=value, aggfunc="sum")
    table = table.reindex(columns=stages).sort_index()
    cells = table.to_numpy(dtype=float)
    is_share = value in {"share", "step_conversion"}
    image = ax.imshow(cells, aspect="auto", cmap="Blues", vmin=0, vmax=1 if is_share else None)
    ax.set_xticks(range(len(stages)), labels=stages, rotation=30, ha="right")
    ax.set_yticks(range(len(table.index)), labels=[_cohort_label(c) for c in table.index])
    for (r, c), v in np.ndenumerate(cells):
        if not np.isnan(v):
            text = f"{v:.0%}" if is_share else f"{v:,.0f}"
            light = is_share and v > 0.6
            ax.text(
                c,
                r,
                text,
                ha="center",
                va="center",
                fontsize=7,
                color="white" if light else "black",
            )
    bar = ax.figure.colorbar(image, ax=ax)
    bar.set_label(value.replace("_", " "))
    ax.set_xlabel("stage")
    ax.set_ylabel("cohort (creation day, business time zone)")
    ax.set_title(title)
    return ax


def _x_for(df: pd.DataFrame) -> tuple[str, list[str] | None]:
    for col, label in (
        ("hour", None),
        ("weekday", "weekday_name"),
        ("amount_bucket", "amount_range"),
    ):
        if col in df.columns:
            return col, (list(df[label]) if label else None)
    if "cohort" in df.columns:
        return "cohort", None
    raise UsageError("expiry_rate_lines needs a cohort, hour, weekday or amount_bucket column")


_X_LABELS = {
    "cohort": "cohort (creation day, business time zone)",
    "hour": "hour of creation (business time zone)",
    "weekday": "weekday of creation (business time zone)",
    "amount_bucket": "intent amount",
}


def expiry_rate_lines(
    expiry: pd.DataFrame,
    ax: Axes | None = None,
    *,
    title: str | None = None,
    confidence_label: str = "95% Wilson interval",
) -> Axes:
    """Expiry rate with its confidence band, and the share still open (right-censored).

    Takes `recon.analytics.expiry_rates(...)` grouped by cohort, hour, weekday or amount. The
    dashed line is the rate if every still-open intent expired; the gap to the solid line is
    what censoring leaves unknown.
    """
    _need(
        expiry,
        ["expiry_rate", "ci_low", "ci_high", "expiry_rate_max", "intents"],
        "expiry_rate_lines",
    )
    ax = _axes(ax)
    col, labels = _x_for(expiry)
    title = title or _type_title(expiry, f"expiry rate by {col.replace('_', ' ')}")
    if expiry.empty:
        return _empty(ax, title)
    df = expiry.reset_index(drop=True)
    if col == "cohort" and pd.api.types.is_datetime64_any_dtype(df["cohort"]):
        x: Any = df["cohort"]
    else:
        x = np.arange(len(df))
    time_axis = col == "cohort" and pd.api.types.is_datetime64_any_dtype(df["cohort"])
    ax.plot(x, df["expiry_rate"], marker="o", color=_COLOURS["expired"], label="expired")
    if time_axis:
        ax.fill_between(
            x,
            df["ci_low"],
            df["ci_high"],
            color=_COLOURS["expired"],
            alpha=0.2,
            label=confidence_label,
        )
    else:
        # separate groups (hours, weekdays, amounts): one interval per point, so a group
        # between two empty ones still shows its band
        rate = df["expiry_rate"].to_numpy(dtype=float)
        below = np.clip(rate - df["ci_low"].to_numpy(dtype=float), 0, None)
        above = np.clip(df["ci_high"].to_numpy(dtype=float) - rate, 0, None)
        ax.errorbar(
            x,
            rate,
            yerr=[below, above],
            fmt="none",
            ecolor=_COLOURS["expired"],
            alpha=0.45,
            capsize=3,
            linewidth=4,
            label=confidence_label,
        )
    ax.plot(
        x,
        df["expiry_rate_max"],
        linestyle="--",
        color=_COLOURS["still_open"],
        label="if every still-open intent expired",
    )
    if not time_axis:
        ticks = labels if labels is not None else [_cohort_label(v) for v in df[col]]
        ax.set_xticks(
            x,
            labels=ticks,
            rotation=30 if col == "amount_bucket" else 0,
            ha="right" if col == "amount_bucket" else "center",
            parse_math=False,  # "R$ 50,00 – R$ 200,00" is text, not mathtext
        )
    else:
        ax.tick_params(axis="x", labelrotation=30)
    ax.set_ylim(0, 1)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel(_X_LABELS[col])
    ax.set_ylabel("share of intents created")
    open_share = df["still_open"].sum() / max(int(df["intents"].sum()), 1)
    ax.set_title(f"{title} ({open_share:.0%} still open)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    return ax


def time_to_pay_hist(
    durations: pd.DataFrame,
    ax: Axes | None = None,
    *,
    bins: int = 30,
    title: str | None = None,
) -> Axes:
    """Histogram of minutes from creation to payment (or completion), median and p90 marked.

    Takes `recon.analytics.time_to_pay(...)` or `time_to_complete(...)`.
    """
    _need(durations, ["seconds", "exact"], "time_to_pay_hist")
    ax = _axes(ax)
    stage = str(durations["stage"].iloc[0]) if "stage" in durations and len(durations) else ""
    what = "pay" if stage in {"fiat_received", "onchain_received"} else "complete"
    title = title or _type_title(durations, f"time to {what}")
    if durations.empty:
        return _empty(ax, title)
    minutes = durations["seconds"].astype(float) / 60
    ax.hist(minutes, bins=bins, color=_COLOURS["main"], alpha=0.8)
    for q, style, name in ((0.5, "-", "median"), (0.9, "--", "p90")):
        v = float(minutes.quantile(q))
        ax.axvline(v, color="black", linestyle=style, label=f"{name} {v:,.1f} min")
    ax.set_xlabel(f"minutes from creation to {stage or what}")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("intents")
    exact = float(durations["exact"].mean())
    ax.set_title(f"{title} (n = {len(durations):,}, {exact:.0%} exact)")
    ax.legend(fontsize=8)
    return ax


def volume_bars(
    volumes: pd.DataFrame,
    ax: Axes | None = None,
    *,
    title: str | None = None,
) -> Axes:
    """Stacked bars of amounts (BRL) per cohort by outcome, from `recon.analytics.volumes`."""
    parts = ["completed_cents", "expired_cents", "other_exit_cents", "open_cents"]
    _need(volumes, ["cohort", *parts], "volume_bars")
    ax = _axes(ax)
    title = title or _type_title(volumes, "volume by outcome")
    if volumes.empty:
        return _empty(ax, title)
    table = volumes.groupby("cohort", sort=True)[parts].sum()
    x = np.arange(len(table))
    bottom = np.zeros(len(table))
    names = {
        "completed_cents": ("completed", _COLOURS["completed"]),
        "expired_cents": ("expired", _COLOURS["expired"]),
        "other_exit_cents": ("canceled / failed / refunded", _COLOURS["other_exit"]),
        "open_cents": ("still open", _COLOURS["still_open"]),
    }
    for part in parts:
        values = table[part].to_numpy(dtype=float)
        label, colour = names[part]
        ax.bar(x, values, bottom=bottom, color=colour, label=label)
        bottom += values
    ax.margins(y=0.05)
    ax.set_xticks(x, labels=[_cohort_label(c) for c in table.index], rotation=30, ha="right")
    brl_axis(ax, "y")
    ax.set_xlabel("cohort (creation day, business time zone)")
    ax.set_ylabel("amount (BRL)")
    ax.set_title(f"{title} (total {format_brl(int(bottom.sum()))})", parse_math=False)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    return ax


def break_aging(
    exceptions: pd.DataFrame,
    ax: Axes | None = None,
    *,
    value: str = "count",
    title: str | None = None,
) -> Axes:
    """Stacked horizontal bars: breaks per category, split by how many days they have been
    open. `value="cents"` stacks money at stake (BRL axis) instead of counts.

    Takes `recon_exceptions` rows (`recon.analytics.breaks(...)`).
    """
    table = _breaks.break_aging(exceptions, value=value)
    ax = _axes(ax)
    title = title or ("Break aging" if value == "count" else "Break aging: money at stake")
    if table.empty:
        return _empty(ax, title)
    y = np.arange(len(table))
    left = np.zeros(len(table))
    for colour, bucket in zip(_AGE_COLOURS, table.columns, strict=True):
        values = table[bucket].to_numpy(dtype=float)
        ax.barh(y, values, left=left, color=colour, label=f"open {bucket}")
        left += values
    ax.set_yticks(y, labels=list(table.index))
    ax.invert_yaxis()  # P1 categories on top
    if value == "cents":
        brl_axis(ax, "x")
        ax.set_xlabel("money at stake (BRL)")
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("breaks")
    ax.set_ylabel("category")
    total = int(left.sum())
    suffix = format_brl(total) if value == "cents" else f"{total:,} breaks"
    ax.set_title(f"{title} ({suffix})", parse_math=False)
    ax.legend(fontsize=7, title="age", title_fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    return ax


def breaks_by_category(
    exceptions: pd.DataFrame,
    ax: Axes | None = None,
    *,
    title: str | None = None,
) -> Axes:
    """Horizontal bars of breaks per category (new vs persisting), labelled with the money
    at stake in BRL. Takes `recon_exceptions` rows."""
    table = _breaks.breaks_by_category(exceptions)
    ax = _axes(ax)
    title = title or "Breaks by category"
    if table.empty:
        return _empty(ax, title)
    y = np.arange(len(table))
    ax.barh(y, table["new"], color=_COLOURS["expired"], label="new")
    ax.barh(
        y, table["persisting"], left=table["new"], color=_COLOURS["still_open"], label="persisting"
    )
    for i, (n, cents, prio) in enumerate(
        zip(table["breaks"], table["amount_cents"], table["priority"], strict=True)
    ):
        ax.text(
            n, i, f"  {prio} · {format_brl(int(cents))}", va="center", fontsize=8, parse_math=False
        )
    ax.set_yticks(y, labels=list(table["category"]))
    ax.invert_yaxis()
    ax.set_xlim(0, max(float(table["breaks"].max()), 1.0) * 1.45)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("breaks")
    ax.set_ylabel("category")
    ax.set_title(f"{title} ({int(table['breaks'].sum()):,} breaks)")
    ax.legend(fontsize=8, loc="lower right")
    return ax


def control_totals_bars(
    control: pd.DataFrame,
    ax: Axes | None = None,
    *,
    direction: str = "credit",
    title: str | None = None,
) -> Axes:
    """Per business day: what the intents say should have moved vs what the statement shows
    (BRL), with the unexplained difference marked. Takes `recon.analytics.control_totals`."""
    _need(
        control,
        ["business_day", "direction", "intents_cents", "statement_cents", "unexplained_cents"],
        "control_totals_bars",
    )
    ax = _axes(ax)
    title = title or f"Control totals ({direction}s): intents vs statement"
    df = control[control["direction"] == direction].sort_values("business_day")
    if df.empty:
        return _empty(ax, title)
    x = np.arange(len(df))
    width = 0.4
    ax.bar(x - width / 2, df["intents_cents"], width, color=_COLOURS["main"], label="intents")
    ax.bar(
        x + width / 2, df["statement_cents"], width, color=_COLOURS["completed"], label="statement"
    )
    for i, cents in enumerate(df["unexplained_cents"]):
        if cents:
            ax.text(
                i,
                0,
                f"unexplained {format_brl(int(cents))}",
                rotation=90,
                fontsize=7,
                ha="center",
                va="bottom",
                color=_COLOURS["expired"],
            )
    ax.set_xticks(x, labels=[_cohort_label(d) for d in df["business_day"]], rotation=30, ha="right")
    brl_axis(ax, "y")
    ax.set_xlabel("business day")
    ax.set_ylabel("amount (BRL)")
    unexplained = int(df["unexplained_cents"].abs().sum())
    ax.set_title(f"{title} (unexplained {format_brl(unexplained)})", parse_math=False)
    ax.legend(fontsize=8)
    return ax


BREAK_TABLE_COLUMNS = (
    "priority",
    "category",
    "intent_id",
    "end_to_end_id",
    "expected_cents",
    "actual_cents",
    "delta_cents",
    "age_days",
    "state",
    "reason",
)


BREAK_TABLE_LABELS = (
    "priority",
    "category",
    "intent",
    "end-to-end id",
    "expected (R$)",
    "actual (R$)",
    "difference (R$)",
    "age (days)",
    "state",
    "reason",
)


def break_table(exceptions: pd.DataFrame, *, top: int | None = None) -> Any:
    """The breaks to act on, for a notebook: most urgent first (priority, then money at
    stake), amounts in R$ (pt-BR, right-aligned) and each reason whole, wrapping — a
    DataFrame's own display cuts long text at 50 characters. Returns a pandas Styler; its
    `.data` is the frame shown (cents stay integers there).

    Takes `recon_exceptions` rows (`recon.analytics.breaks(...)`).
    """
    _need(exceptions, list(BREAK_TABLE_COLUMNS), "break_table")
    order = exceptions.assign(
        _p=exceptions["priority"].map({"P1": 0, "P2": 1, "P3": 2}).fillna(9),
        _stake=_breaks.break_amount_cents(exceptions),
    ).sort_values(["_p", "_stake"], ascending=[True, False], kind="stable")
    shown = order.loc[:, list(BREAK_TABLE_COLUMNS)].reset_index(drop=True)
    if top is not None:
        shown = shown.head(top)
    money: list[Hashable] = ["expected_cents", "actual_cents", "delta_cents"]

    def brl(value: Any) -> str:
        return "—" if pd.isna(value) else format_brl(int(value))

    return (
        shown.style.format(dict.fromkeys(money, brl), na_rep="—")
        .relabel_index(list(BREAK_TABLE_LABELS), axis=1)
        .hide(axis="index")
        .set_properties(subset=money, **{"text-align": "right", "white-space": "nowrap"})
        .set_properties(
            subset=["reason"],
            **{"white-space": "normal", "min-width": "28em", "text-align": "left"},
        )
    )
