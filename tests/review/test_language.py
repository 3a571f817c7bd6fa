"""The review app speaks Portuguese (Brazil) unless recon.toml or --lang says English, and
every page declares its language and states its time zone once."""

from __future__ import annotations

import re

import pytest

from recon.config import DataDir

from .conftest import ReviewWorld, add_users

PAGES = ["/", "/breaks/0000000000000000"]


def _lang(html: str) -> str:
    found = re.search(r'<html lang="([^"]+)">', html)
    assert found, html[:200]
    return found.group(1)


def test_pages_are_pt_br_by_default(
    rworld: ReviewWorld, open_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RECON_LANG", raising=False)
    client = open_app(rworld.data)
    for path in PAGES:
        html = client.get(path).text
        assert _lang(html) == "pt-BR", path
        assert html.count("Horários em America/Sao_Paulo") == 1, path
    assert "Fila" in client.get("/").text
    add_users(rworld.data)  # with users, the sign-in page
    html = open_app(rworld.data).get("/login").text
    assert _lang(html) == "pt-BR" and "Entrar" in html and "Senha" in html


def test_pages_speak_english_when_recon_toml_says_so(
    rworld: ReviewWorld, open_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RECON_LANG", raising=False)
    data: DataDir = rworld.data
    data.config_path.write_text('[ui]\nlanguage = "en"\n', encoding="utf-8")
    monkeypatch.chdir(data.root)
    add_users(data)
    client = open_app(data)
    html = client.get("/login").text
    assert _lang(html) == "en" and "Sign in" in html and "Times in America/Sao_Paulo" in html


def test_an_explicit_choice_wins_over_recon_toml(
    rworld: ReviewWorld, open_app, monkeypatch: pytest.MonkeyPatch
) -> None:
    data: DataDir = rworld.data
    data.config_path.write_text('[ui]\nlanguage = "en"\n', encoding="utf-8")
    monkeypatch.setenv("RECON_LANG", "pt-BR")  # what `recon review --lang pt-BR` sets
    assert _lang(open_app(data).get("/").text) == "pt-BR"
