"""The distribution a user installs: the wheel and the sdist `make dist` builds.

The wheel is installed into a fresh virtual environment and `recon demo` runs from another
directory, so a file missing from the package data (an SQL model, a template, a static file,
the OpenAPI document, a CSV table) fails here and not on a user's machine. It works offline:
the fresh environment sees the dependencies already installed beside the running Python
through a .pth line (whose folder's own .pth files, among them the editable install of this
checkout, are not processed), and the wheel is installed with `--no-deps`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import recon

ROOT = Path(__file__).resolve().parents[1]
NAME = "pixrecon"


def run(args: list[str | Path], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def clean_env(tmp: Path) -> dict[str, str]:
    """The caller's environment without what would put this checkout on sys.path."""
    drop = {"PYTHONPATH", "PYTHONHOME", "RECON_DATA"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(XDG_CONFIG_HOME=str(tmp / "config"), MPLBACKEND="Agg")
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel built from it, as `make dist` builds them."""
    out = tmp_path_factory.mktemp("dist")
    env = clean_env(out)
    run([sys.executable, "-m", "build", "--no-isolation", "--outdir", out, ROOT], ROOT, env)
    return out


def on_disk(folder: str) -> set[str]:
    """Every file under `folder` of this checkout, caches aside."""
    return {
        p.relative_to(ROOT).as_posix()
        for p in (ROOT / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def tracked(folder: str) -> set[str]:
    """The files of `folder` under version control (what a fresh clone has), else on disk:
    files other tests write meanwhile are not the distribution's to hold."""
    if not (ROOT / ".git").exists():
        return on_disk(folder)
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", folder], cwd=ROOT, capture_output=True, check=True
    )
    return {name for name in listed.stdout.decode().split("\0") if name}


def test_the_wheel_holds_the_whole_package(dist: Path) -> None:
    (wheel,) = dist.glob("*.whl")
    assert wheel.name == f"{NAME}-{recon.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    package = {n for n in names if n.startswith("recon/")}
    assert tracked("recon") <= package <= on_disk("recon"), sorted(tracked("recon") - package)[:5]
    info = f"{NAME}-{recon.__version__}.dist-info"
    assert f"{info}/licenses/LICENSE" in names
    with zipfile.ZipFile(wheel) as archive:
        metadata = archive.read(f"{info}/METADATA").decode()
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert f"Name: {NAME}\n" in metadata and f"Version: {recon.__version__}\n" in metadata
    assert "recon = recon.cli:main" in entry_points


def test_the_sdist_holds_the_tests_and_the_docs(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    assert sdist.name == f"{NAME}-{recon.__version__}.tar.gz"
    prefix = f"{NAME}-{recon.__version__}/"
    with tarfile.open(sdist) as archive:
        names = {m.name.removeprefix(prefix) for m in archive.getmembers() if m.isfile()}
    for path in ("LICENSE", "CHANGELOG.md", "README.md", "Makefile", "pyproject.toml"):
        assert path in names
    for folder in ("tests", "docs"):
        files = tracked(folder)
        assert files and files <= names, sorted(files - names)[:5]
    # from a clone: every tracked file but the CI's own and the data folder's placeholder
    if (ROOT / ".git").exists():
        source = {f for f in tracked(".") if not f.startswith((".ci/", ".github/", "data/"))}
        assert source - {".gitignore"} <= names, sorted(source - names)
    assert not any(n.startswith(("data/", "build/", "dist/")) for n in names)


@pytest.mark.slow
def test_the_wheel_installs_and_runs_the_demo_from_another_directory(
    dist: Path, tmp_path: Path
) -> None:
    (wheel,) = dist.glob("*.whl")
    env = clean_env(tmp_path)
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], tmp_path, env)
    python = venv / "bin" / "python"
    site = run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path, env
    )
    Path(site.stdout.strip(), "_dependencies.pth").write_text(
        sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8"
    )
    pip = [sys.executable, "-m", "pip", "--python", python]
    run([*pip, "install", "--quiet", "--no-deps", "--no-index", wheel], tmp_path, env)
    where = tmp_path / "elsewhere"
    where.mkdir()
    found = run([python, "-c", "import recon; print(recon.__file__)"], where, env)
    assert Path(found.stdout.strip()).is_relative_to(venv), found.stdout
    demo = subprocess.run(
        [venv / "bin" / "recon", "demo", "--days", "2", "--intents-per-day", "40"],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert demo.returncode in (0, 1), demo.stdout + demo.stderr
    assert "precision" in demo.stdout, demo.stdout
    (report,) = where.glob("data/demo-*/reports/*/report.html")
    assert report.stat().st_size > 10_000
