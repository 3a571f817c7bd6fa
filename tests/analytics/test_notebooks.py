"""The notebooks: committed without outputs, executed against the sandbox, rendered to HTML."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

from recon.analytics import notebooks as runner
from recon.config import DataDir
from recon.ops.demo import ensure_demo_data

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAMES = ["01_funnel_conversion", "02_expiry_rates", "03_reconciliation_review"]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_notebooks", NOTEBOOKS / "make_notebooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_committed_notebooks_have_no_outputs_and_a_parameters_cell() -> None:
    gen = _generator()
    for name in NAMES:
        path = NOTEBOOKS / f"{name}.ipynb"
        nb = nbformat.read(str(path), as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(c.outputs == [] and c.execution_count is None for c in code), name
        params = [c for c in code if "parameters" in c.metadata.get("tags", [])]
        assert len(params) == 1 and code.index(params[0]) == 0, name
        for var in ("data_dir", "start_date", "end_date"):
            assert f"{var} = None" in params[0].source
        # exactly what notebooks/make_notebooks.py writes: no hand edits, no stray outputs
        assert json.loads(path.read_text()) == json.loads(nbformat.writes(gen.build(path.name)))


PUBLIC_IMPORTS = (
    "from recon import analytics, charts",
    "from recon.ops.demo import ensure_demo_data",
)


def test_notebooks_only_call_the_public_api() -> None:
    for name in NAMES:
        nb = nbformat.read(str(NOTEBOOKS / f"{name}.ipynb"), as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            for line in cell.source.splitlines():
                assert not line.lstrip().startswith(("def ", "for ", "while ", "class ", "if ")), (
                    name,
                    line,
                )
                assert "import" not in line or line in PUBLIC_IMPORTS


@pytest.fixture(scope="module")
def sandbox_data(tmp_path_factory: pytest.TempPathFactory) -> DataDir:
    """A small sandbox world: the notebooks' default path when a data dir has no snapshot."""
    root = tmp_path_factory.mktemp("sandbox") / "data"
    data = ensure_demo_data(root, days=4, intents_per_day=30)
    assert any(data.snapshots.rglob("part-*.parquet")) and any(data.runs.iterdir())
    # a second call re-uses what is there
    assert ensure_demo_data(root).root == data.root
    return data


@pytest.mark.slow
def test_notebooks_execute_against_the_sandbox_and_render_html(
    sandbox_data: DataDir, tmp_path: Path
) -> None:
    pages = runner.run_all(tmp_path / "out", data_dir=sandbox_data.root)
    assert [p.name for p in pages] == [f"{n}.html" for n in NAMES]
    for page in pages:
        executed = nbformat.read(str(page.with_suffix(".ipynb")), as_version=4)
        outputs = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs]
        assert not [o for o in outputs if o.get("output_type") == "error"], page.name
        images = [o for o in outputs if "image/png" in o.get("data", {})]
        assert len(images) >= 4, page.name  # the charts drew real sandbox data
        html = page.read_text(encoding="utf-8")
        assert "data:image/png;base64" in html and "<html" in html


def test_a_failing_notebook_fails_the_run(
    tmp_path: Path, data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "nb"
    source.mkdir()
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("data_dir = None", metadata={"tags": ["parameters"]}),
            nbformat.v4.new_code_cell("raise ValueError('broken on purpose')"),
        ]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, source / "09_broken.ipynb")
    argv = [
        "--out",
        str(tmp_path / "out"),
        "--data",
        str(data_dir.root),
        "--notebooks",
        str(source),
    ]
    assert runner.main(argv) == 2  # an error, never the breaks code
    err = capsys.readouterr().err
    assert re.search(r"09_broken\.ipynb: cell \d+ failed: ValueError: broken on purpose", err)


def test_no_notebooks_is_a_usage_error(tmp_path: Path) -> None:
    assert runner.main(["--out", str(tmp_path), "--notebooks", str(tmp_path)]) == 2
