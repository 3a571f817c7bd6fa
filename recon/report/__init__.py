"""recon.report: one self-contained HTML file per reconciliation run.

The report only renders what a run already holds (``summary.json``, ``exceptions.parquet``,
``matches.parquet``); it computes nothing that changes a result. Beside the HTML it writes
``breaks.csv`` and ``breaks.parquet`` for a spreadsheet.
"""

from __future__ import annotations

from recon.report.render import ReportData, load_report_data, render, report_dir_for

__all__ = ["ReportData", "load_report_data", "render", "report_dir_for"]
