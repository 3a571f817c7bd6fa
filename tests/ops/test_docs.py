"""Every `recon` command (and each of its options) is documented (docs/commands.md + README.md)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from recon.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
COMMANDS_DOC = ROOT / "docs" / "commands.md"
COMMON = {"--help", "--data", "--verbose"}

# The README's command table: the contract, whether or not its module is registered yet.
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


def docs_text() -> str:
    readme = ROOT / "README.md"
    return (
        COMMANDS_DOC.read_text(encoding="utf-8")
        + "\n"
        + (readme.read_text(encoding="utf-8") if readme.is_file() else "")
    )


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
    """No file cites the first brief or a folder outside the repository: the README's
    Contracts section is the contract, `recon/api/openapi.json` describes the API."""
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
