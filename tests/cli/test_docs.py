"""The docs: every `recon` command (and each of its options) is documented (docs/commands.md,
docs/contracts.md, README.md); the README stays short; no page narrates how the work went."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from recon.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
COMMANDS_DOC = ROOT / "docs" / "commands.md"
COMMON = {"--help", "--data", "--verbose", "--lang"}

# The command table of docs/contracts.md: the contract, whether or not its module is registered yet.
DESIGN_COMMANDS = (
    "sandbox serve",
    "extract",
    "statements import",
    "reconcile",
    "report",
    "daily",
    "sql",
    "demo",
)


def cli_commands() -> dict[str, argparse.ArgumentParser]:
    """Leaf commands of the CLI by name ("sandbox serve", "report", ...)."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs and prefix:
            found[prefix] = parser
        for action in subs:
            for name, child in action.choices.items():
                walk(child, f"{prefix} {name}".strip())

    walk(build_parser(), "")
    return found


CONTRACTS_DOC = ROOT / "docs" / "contracts.md"


def docs_text() -> str:
    pages = (COMMANDS_DOC, CONTRACTS_DOC, ROOT / "README.md")
    return "\n".join(page.read_text(encoding="utf-8") for page in pages)


def section(text: str, command: str) -> str:
    """The `### recon <command>` section of docs/commands.md."""
    match = re.search(rf"^### recon {re.escape(command)}\n(.*?)(?=^### |\Z)", text, re.M | re.S)
    assert match, f"docs/commands.md has no section '### recon {command}'"
    return match.group(1)


def test_design_commands_are_documented() -> None:
    text = docs_text()
    for command in DESIGN_COMMANDS:
        assert f"recon {command}" in text, f"`recon {command}` is not documented"
        section(COMMANDS_DOC.read_text(encoding="utf-8"), command)


def test_every_cli_command_and_option_is_documented() -> None:
    doc = COMMANDS_DOC.read_text(encoding="utf-8")
    for command, parser in cli_commands().items():
        body = section(doc, command)
        assert f"recon {command}" in body, f"no usage line for `recon {command}`"
        for action in parser._actions:
            for flag in action.option_strings:
                if flag.startswith("--") and flag not in COMMON:
                    assert flag in body, f"`recon {command} {flag}` is not documented"


def test_design_commands_exist_in_the_cli() -> None:
    # also a check of the check: the walk finds nested commands such as `sandbox serve`
    assert set(DESIGN_COMMANDS) <= set(cli_commands())
    assert {"reconcile", "resolve", "report", "daily", "demo"} <= set(cli_commands())


def test_the_repository_stands_alone() -> None:
    """No file cites the first brief or a folder outside the repository: docs/contracts.md
    is the contract, `recon/api/openapi.json` describes the API."""
    root = Path(__file__).resolve().parents[2]
    needles = ("DESIGN" + ".md", "../" + "shared")
    skip = {".git", ".venv", "build", "data", "node_modules", ".mypy_cache", ".ruff_cache"}
    offenders = []
    for path in root.rglob("*"):
        parts = set(path.relative_to(root).parts)
        if parts & skip or not path.is_file() or path.suffix in {".parquet", ".png", ".pyc"}:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        offenders += [f"{path.relative_to(root)}: {n}" for n in needles if n in text]
    assert offenders == []


def published_pages() -> list[Path]:
    """What a reader of the repository or the sdist reads as documentation."""
    return [
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        ROOT / "bench" / "README.md",
        *sorted((ROOT / "docs").glob("*.md")),
    ]


# the work's history told in a document: "the eighth session", "session 3", "issue 18",
# "issue-34", "before this change"; a sign-in session or a Spark session is no history
NARRATION = re.compile(
    r"\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
    r"|this|that|last|previous|next|same|whole|earlier|later)\s+session\b"
    r"|\bsessions?\s+(?:of\s+)?\d|\bissues?\s*[#-]?\s*\d+"
    r"|\b(?:before|after|since|until)\s+this\s+(?:change|work|session)\b",
    re.IGNORECASE,
)


def narration(text: str) -> list[str]:
    return [m.group(0) for m in NARRATION.finditer(text)]


def test_the_narration_check_finds_what_it_must() -> None:
    said = "Eleventh session: faster. Before issue 18 and issue-34; before this change, session 4."
    assert narration(said) == [
        "Eleventh session",
        "issue 18",
        "issue-34",
        "before this change",
        "session 4",
    ]
    assert narration("the review app's sign-in session; a local Spark session; 4 issues") == []


def test_no_page_narrates_how_the_work_went() -> None:
    found = [
        f"{page.relative_to(ROOT)}: {hit}"
        for page in published_pages()
        for hit in narration(page.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_readme_is_short_and_starts_with_the_two_commands() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines; details go to docs/"
    assert lines[3].startswith("make demo") and lines[4].startswith("make test")
    text = "\n".join(lines)
    assert "pipx install pixrecon" in text and "pip install pixrecon" in text
    for link in re.findall(r"\]\(((?:docs|bench)/[^)#]+)", text):
        assert (ROOT / link).is_file(), link


# a path, not a glob (`tests/sandbox/test_world*.py`) nor part of a URI (`s3://finance-recon/...`)
PATH_IN_DOCS = re.compile(r"(?<![\w/.-])((?:recon|tests)/[\w/]*\w(?:\.[\w-]*\w)*)(?![\w*-])")
MODULE_IN_DOCS = re.compile(r"(?<![\w/.-])(recon(?:\.[A-Za-z_]\w*)+)")
NOT_MODULES = {"recon.toml", "recon.duckdb", "recon.env", "recon.lock"}


def missing_names(text: str) -> list[str]:
    """Paths (`recon/...`, `tests/...`) and modules (`recon.a.b`, `recon.a.b.name`) a page
    names that the checkout does not have: the docs follow the code when it moves."""
    missing = [p for p in PATH_IN_DOCS.findall(text) if not (ROOT / p).exists()]
    for dotted in set(MODULE_IN_DOCS.findall(text)) - NOT_MODULES:
        parts = dotted.split(".")
        source = None
        for i in range(len(parts), 0, -1):
            base = ROOT.joinpath(*parts[:i])
            found = [f for f in (base.with_suffix(".py"), base / "__init__.py") if f.is_file()]
            if found:
                source, rest = found[0].read_text(encoding="utf-8"), parts[i:]
                break
        # a module, or one name it defines (`recon.schemas.CATEGORIES`); no deeper
        if source is None or len(rest) > 1 or (rest and not re.search(rf"\b{rest[0]}\b", source)):
            missing.append(dotted)
    return missing


def test_the_path_check_finds_what_it_must() -> None:
    said = (
        "`recon/extract/walk.py`, `recon.reconcile.engine`, s3://finance-recon/prod, `tests/x*.py`"
    )
    assert sorted(missing_names(said)) == ["recon.reconcile.engine", "recon/extract/walk.py"]
    assert missing_names("`recon/models/marts`, `recon.schemas.CATEGORIES`, recon.toml") == []
    # a name with several suffixes is one path, and a sentence's full stop is not part of it
    golden = "tests/reconciliation/golden/reasons_by_code"
    assert missing_names(f"{golden}.pt-BR.txt and {golden}.en.txt.") == []
    assert missing_names(f"{golden}.fr.txt") == [f"{golden}.fr.txt"]


def test_the_docs_name_paths_and_modules_that_exist() -> None:
    found = [
        f"{page.relative_to(ROOT)}: {name}"
        for page in published_pages()
        for name in missing_names(page.read_text(encoding="utf-8"))
    ]
    assert found == []
