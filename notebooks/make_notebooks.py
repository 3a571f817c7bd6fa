"""Write the analysis notebooks (without outputs) from the cell lists below.

    .venv/bin/python notebooks/make_notebooks.py

The notebooks hold no logic: each cell calls recon's public API (recon.analytics,
recon.charts, recon.ops.demo) and shows the result. Edit the cells here, re-run, commit the .ipynb files;
tests/analytics/test_notebooks.py checks the committed files are exactly what this writes.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

PARAMETERS = """\
# Parameters (papermill): the data directory and the creation days to include (YYYY-MM-DD).
# data_dir = None uses $RECON_DATA, else a small sandbox world built on first use.
data_dir = None
start_date = None
end_date = None"""

SETUP = """\
%matplotlib inline
from recon import analytics, charts
from recon.ops.demo import ensure_demo_data

data = ensure_demo_data(data_dir)
window = dict(start=start_date, end=end_date)
data"""


# said once, under each notebook's title
INSTALL = (
    "Needs recon: `pip install pixrecon` (the library is imported as `recon`), or a clone's "
    "`.venv` (`make demo` builds it)."
)


def _cells(spec: list[tuple[str, str]]) -> list[nbformat.NotebookNode]:
    cells = []
    for i, (kind, text) in enumerate(spec):
        if kind == "md" and i == 0:
            cells.append(new_markdown_cell(f"{text}\n\n{INSTALL}"))
        elif kind == "md":
            cells.append(new_markdown_cell(text))
        elif kind == "params":
            cells.append(new_code_cell(text, metadata={"tags": ["parameters"]}))
        else:
            cells.append(new_code_cell(text))
    return cells


NOTEBOOKS: dict[str, list[tuple[str, str]]] = {
    "01_funnel_conversion.ipynb": [
        (
            "md",
            "# Funnel conversion\n\n"
            "How onramps and offramps move through their lifecycles: the share of each "
            "creation cohort that reached each stage (a later stage counts as passing the "
            "earlier ones), where they drop off, how long paying and completing take, and "
            "the volumes in BRL. Built from the snapshots' `status_history`; see "
            "`docs/analytics.md`.",
        ),
        ("params", PARAMETERS),
        ("code", SETUP),
        ("md", "## Onramp funnel, all cohorts pooled"),
        (
            "code",
            'onramp = analytics.funnel(data, intent_type="onramp", cohort="all", **window)\n'
            "onramp",
        ),
        ("code", "charts.funnel_bars(onramp);"),
        ("md", "## Onramp funnel by creation day"),
        (
            "code",
            'by_day = analytics.funnel(data, intent_type="onramp", cohort="day", **window)\n'
            "charts.cohort_heatmap(by_day);",
        ),
        ("md", "## Offramp funnel"),
        (
            "code",
            'offramp = analytics.funnel(data, intent_type="offramp", cohort="all", **window)\n'
            "charts.funnel_bars(offramp);",
        ),
        (
            "code",
            'charts.cohort_heatmap(analytics.funnel(data, intent_type="offramp", **window));',
        ),
        (
            "md",
            "## Time to pay and to complete\n\n"
            "`exact` is the share of intents whose entry time is known from `updated_at`; the "
            "others use the midpoint of the bracket between two snapshots.",
        ),
        (
            "code",
            'pay = analytics.time_to_pay(data, intent_type="onramp", **window)\n'
            "analytics.duration_summary(pay)",
        ),
        ("code", "charts.time_to_pay_hist(pay);"),
        (
            "code",
            'done = analytics.time_to_complete(data, intent_type="offramp", **window)\n'
            "charts.time_to_pay_hist(done)\n"
            "analytics.duration_summary(done, by=None)",
        ),
        ("md", "## Volumes (BRL) and where intents leave the lifecycle"),
        (
            "code",
            'charts.volume_bars(analytics.volumes(data, intent_type="onramp", **window));',
        ),
        (
            "code",
            'charts.volume_bars(analytics.volumes(data, intent_type="offramp", **window));',
        ),
        ("code", "analytics.failures(data, **window)"),
    ],
    "02_expiry_rates.ipynb": [
        (
            "md",
            "# Expiry rates\n\n"
            "Share of onramps that expired unpaid, by creation cohort, amount, hour of day and "
            "weekday (business time zone America/Sao_Paulo). Bands are 95% Wilson intervals. "
            "Intents still open when last seen are right-censored: the dashed line is the "
            "rate if every one of them expired, so the truth lies between the lines.",
        ),
        ("params", PARAMETERS),
        ("code", SETUP),
        ("md", "## By creation day"),
        (
            "code",
            'by_cohort = analytics.expiry_rates(data, by="cohort", **window)\n'
            "charts.expiry_rate_lines(by_cohort)\n"
            "by_cohort",
        ),
        ("md", "## By amount"),
        (
            "code",
            'by_amount = analytics.expiry_rates(data, by="amount", **window)\n'
            "charts.expiry_rate_lines(by_amount)\n"
            "by_amount",
        ),
        ("md", "## By hour of day and weekday"),
        (
            "code",
            'charts.expiry_rate_lines(analytics.expiry_rates(data, by="hour", **window));',
        ),
        (
            "code",
            'charts.expiry_rate_lines(analytics.expiry_rates(data, by="weekday", **window));',
        ),
        ("md", "## Offramps"),
        (
            "code",
            "charts.expiry_rate_lines(\n"
            '    analytics.expiry_rates(data, intent_type="offramp", by="cohort", **window)\n'
            ");",
        ),
        ("md", "## Why intents ended: statusReason"),
        ("code", "analytics.status_reasons(data, **window)"),
    ],
    "03_reconciliation_review.ipynb": [
        (
            "md",
            "# Reconciliation review\n\n"
            "The latest run: how statement lines matched intents, the control totals per "
            "business day, and the open breaks by category and age. Amounts are integer "
            "cents in tables and BRL on the charts.",
        ),
        ("params", PARAMETERS),
        ("code", SETUP),
        ("md", "## The run"),
        ("code", "analytics.run_overview(data)"),
        ("code", "analytics.matches_by_rule(data)"),
        ("md", "## Control totals"),
        (
            "code",
            "control = analytics.control_totals(data)\n"
            'charts.control_totals_bars(control, direction="credit")\n'
            "control",
        ),
        ("code", 'charts.control_totals_bars(control, direction="debit");'),
        ("md", "## Breaks"),
        (
            "code",
            "breaks = analytics.breaks(data)\n"
            "charts.breaks_by_category(breaks)\n"
            "analytics.breaks_by_category(breaks)",
        ),
        ("code", "charts.break_aging(breaks)\nanalytics.break_aging(breaks)"),
        ("code", 'charts.break_aging(breaks, value="cents");'),
        ("md", "## Every break, to act on"),
        (
            "code",
            "charts.break_table(breaks)",
        ),
    ],
}


def build(name: str) -> nbformat.NotebookNode:
    """The notebook `name` with empty outputs (execution counts null)."""
    nb = new_notebook(cells=_cells(NOTEBOOKS[name]))
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    }
    nb.metadata["language_info"] = {"name": "python"}
    # stable cell ids, so re-running this script changes nothing
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{Path(name).stem[:2]}-{i:02d}"
    return nb


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else HERE
    for name in NOTEBOOKS:
        nbformat.write(build(name), out / name)
        print(out / name)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
