"""Execute the analysis notebooks and render each to HTML (what `make notebooks` runs).

    python -m recon.analytics.notebooks --out build/notebooks [--data DIR]
        [--start YYYY-MM-DD] [--end YYYY-MM-DD] [--notebooks DIR]

Each notebook in `notebooks/` is executed with papermill (its `parameters` cell receives
data_dir, start_date, end_date) on the `python3` kernel, i.e. this interpreter, then written
to `<out>/<name>.ipynb` and `<out>/<name>.html` (nbconvert). A failing cell fails the run
(exit 1) and names the notebook. With no --data and no $RECON_DATA the notebooks run
against a small sandbox world built in `<out>/sandbox-data`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from recon.errors import NotebookError, UsageError

__all__ = ["NotebookError", "default_notebooks_dir", "execute", "render_html", "run_all"]

KERNEL_NAME = "python3"


def default_notebooks_dir() -> Path:
    """`notebooks/` of the source checkout this package runs from."""
    return Path(__file__).resolve().parents[2] / "notebooks"


def execute(
    notebook: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    parameters: dict[str, Any] | None = None,
    kernel_name: str = KERNEL_NAME,
    timeout: float = 600,
) -> Path:
    """Run `notebook` with papermill into `output` (parameters injected); raise
    NotebookError naming the notebook if any cell fails."""
    import papermill

    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        papermill.execute_notebook(
            str(notebook),
            str(out),
            parameters=parameters or {},
            kernel_name=kernel_name,
            progress_bar=False,
            log_output=False,
            cwd=str(out.parent),
            execution_timeout=timeout,
        )
    except papermill.PapermillExecutionError as exc:
        raise NotebookError(
            f"{Path(notebook).name}: cell {exc.exec_count} failed: {exc.ename}: {exc.evalue}"
        ) from exc
    return out


def render_html(executed: str | os.PathLike[str], html: str | os.PathLike[str]) -> Path:
    """Render an executed notebook to a standalone HTML file (charts embedded)."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(executed), as_version=4)
    body, _resources = HTMLExporter().from_notebook_node(nb)
    target = Path(html)
    target.write_text(body, encoding="utf-8")
    return target


def run_all(
    out: str | os.PathLike[str],
    *,
    data_dir: str | os.PathLike[str] | None = None,
    start_date: str | None = None,
    end_date: str | None = None,
    notebooks: str | os.PathLike[str] | None = None,
) -> list[Path]:
    """Execute every `NN_*.ipynb` of `notebooks` (default: the checkout's notebooks/) and
    render each to HTML in `out`; return the HTML paths in name order."""
    out_dir = Path(out).resolve()
    source = Path(notebooks) if notebooks else default_notebooks_dir()
    found = sorted(source.glob("[0-9]*.ipynb"))
    if not found:
        raise UsageError(f"no notebooks found in {source}")
    data = data_dir or os.environ.get("RECON_DATA") or out_dir / "sandbox-data"
    params = {
        "data_dir": str(Path(data).resolve()),
        "start_date": start_date,
        "end_date": end_date,
    }

    pages = []
    # One at a time: each runs in its own kernel process already, and nbclient's event loops
    # are only closed cleanly on the main thread.
    for nb in found:
        executed = execute(nb, out_dir / nb.name, parameters=params)
        pages.append(render_html(executed, executed.with_suffix(".html")))
    return pages


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m recon.analytics.notebooks",
        description="Execute the analysis notebooks and render them to HTML.",
    )
    parser.add_argument("--out", default="build/notebooks", help="output folder")
    parser.add_argument("--data", default=None, help="data directory (default: sandbox)")
    parser.add_argument("--start", default=None, help="first creation day, YYYY-MM-DD")
    parser.add_argument("--end", default=None, help="last creation day, YYYY-MM-DD")
    parser.add_argument("--notebooks", default=None, help="folder of notebooks to run")
    args = parser.parse_args(argv)
    began = time.perf_counter()
    try:
        pages = run_all(
            args.out,
            data_dir=args.data,
            start_date=args.start,
            end_date=args.end,
            notebooks=args.notebooks,
        )
    except UsageError as exc:
        print(f"recon notebooks: error: {exc}", file=sys.stderr)
        return exc.exit_code
    for page in pages:
        print(page)
    print(f"{len(pages)} notebooks rendered in {time.perf_counter() - began:.1f} s")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
