"""`recon statements pull` against a MockTransport API Pix: token, pages, retries, errors."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from recon.config import DataDir
from recon.errors import ApiConnectionError, ApiStatusError, ServerError, Unauthorized, UsageError
from recon.statements.pull import fetch_pages, pull_pix

from .conftest import view_rows

SECRET = "s3cr3t-value"
BASE = "https://pix.example.test/api/v2"


def _item(n: int) -> dict[str, Any]:
    return {
        "endToEndId": f"E18236120202611011000{n:011d}",
        "valor": f"{n}.00",
        "horario": "2026-11-01T10:00:00-03:00",
        "chave": "11222333000181",
    }


class FakePix:
    """A tiny API Pix: 5 items, pages of `itensPorPagina`, optional faults."""

    def __init__(
        self, items: int = 5, *, faults: list[int] | None = None, expire_once: bool = False
    ):
        self.items = [_item(n) for n in range(1, items + 1)]
        self.faults = list(faults or [])
        self.expire_once = expire_once
        self.tokens: list[str] = []
        self.calls: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls.append(f"{request.method} {request.url.path}")
        if self.faults:
            return httpx.Response(self.faults.pop(0), headers={"Retry-After": "0"})
        if request.url.path.endswith("/oauth/token"):
            auth = request.headers.get("authorization", "")
            user, _, pw = base64.b64decode(auth.split()[1]).decode().partition(":")
            form = parse_qs(request.content.decode())
            if (user, pw) != ("client-1", SECRET) or form.get("grant_type") != [
                "client_credentials"
            ]:
                return httpx.Response(401, json={"error": "invalid_client"})
            token = f"tok{len(self.tokens)}"
            self.tokens.append(token)
            return httpx.Response(200, json={"access_token": token, "token_type": "Bearer"})
        if request.url.path.endswith("/pix"):
            token = request.headers.get("authorization", "").removeprefix("Bearer ")
            if token not in self.tokens or (self.expire_once and token == "tok0"):
                return httpx.Response(401, json={"title": "token expirado"})
            q = request.url.params
            size = int(q["paginacao.itensPorPagina"])
            page = int(q["paginacao.paginaAtual"])
            pages = max(1, -(-len(self.items) // size))
            body = {
                "parametros": {
                    "inicio": q["inicio"],
                    "fim": q["fim"],
                    "paginacao": {
                        "paginaAtual": page,
                        "itensPorPagina": size,
                        "quantidadeDePaginas": pages,
                        "quantidadeTotalDeItens": len(self.items),
                    },
                },
                "pix": self.items[page * size : (page + 1) * size],
            }
            return httpx.Response(200, json=body)
        return httpx.Response(404)


def _pull(fake: FakePix, data: DataDir, **kw: Any) -> Any:
    return pull_pix(
        BASE,
        "client-1",
        SECRET,
        "2026-11-01T00:00:00-03:00",
        "2026-11-02T00:00:00-03:00",
        data,
        transport=httpx.MockTransport(fake),
        sleep=lambda s: None,
        **kw,
    )


def test_pages_are_walked_and_imported(data_dir: DataDir) -> None:
    fake = FakePix(5)
    report = _pull(fake, data_dir, page_size=2)
    assert (report.read, report.imported) == (5, 5)
    assert fake.calls.count(f"GET {httpx.URL(BASE).path}/pix") == 3
    assert sorted(r["amount_cents"] for r in view_rows(data_dir)) == [100, 200, 300, 400, 500]
    again = _pull(FakePix(5), data_dir, page_size=3)
    assert (again.imported, again.duplicate) == (0, 5)


def test_empty_period(data_dir: DataDir) -> None:
    report = _pull(FakePix(0), data_dir)
    assert report.read == 0


def test_transient_errors_are_retried(data_dir: DataDir) -> None:
    fake = FakePix(3, faults=[503, 429])
    report = _pull(fake, data_dir)
    assert report.imported == 3


def test_expired_token_is_renewed_once(data_dir: DataDir) -> None:
    fake = FakePix(2, expire_once=True)
    assert _pull(fake, data_dir).imported == 2
    assert fake.tokens == ["tok0", "tok1"]


def test_bad_credentials_do_not_leak_the_secret(data_dir: DataDir) -> None:
    fake = FakePix(1)
    with pytest.raises(Unauthorized) as err:
        pull_pix(
            BASE,
            "someone-else",
            SECRET,
            "2026-11-01T00:00:00Z",
            "2026-11-02T00:00:00Z",
            data_dir,
            transport=httpx.MockTransport(fake),
        )
    assert SECRET not in str(err.value)
    assert err.value.exit_code == 3


def test_server_keeps_failing(data_dir: DataDir) -> None:
    with pytest.raises(ServerError):
        _pull(FakePix(1, faults=[500] * 10), data_dir)


def test_connection_errors(data_dir: DataDir) -> None:
    def down(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused {SECRET}")

    with pytest.raises(ApiConnectionError) as err:
        pull_pix(
            BASE,
            "client-1",
            SECRET,
            "2026-11-01T00:00:00Z",
            "2026-11-02T00:00:00Z",
            data_dir,
            transport=httpx.MockTransport(down),
            sleep=lambda s: None,
        )
    assert SECRET not in str(err.value)


@pytest.mark.parametrize(
    "body",
    [b"not json", json.dumps({"parametros": {}}).encode(), json.dumps([1]).encode()],
)
def test_malformed_pages(data_dir: DataDir, body: bytes) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/oauth/token"):
            return httpx.Response(200, json={"access_token": "t"})
        return httpx.Response(200, content=body)

    with pytest.raises(ApiStatusError):
        fetch_pages(
            BASE,
            "c",
            SECRET,
            "2026-11-01T00:00:00Z",
            "2026-11-02T00:00:00Z",
            transport=httpx.MockTransport(handler),
        )


def test_malformed_items_follow_the_import_rules(data_dir: DataDir) -> None:
    fake = FakePix(2)
    fake.items[1]["valor"] = "abc"
    with pytest.raises(Exception, match="valor"):
        _pull(fake, data_dir)
    report = _pull(fake, data_dir, quarantine=True)
    assert (report.imported, report.quarantined) == (1, 1)


@pytest.mark.parametrize(
    ("inicio", "secret", "size"),
    [
        ("2026-11-01T00:00:00", SECRET, 100),
        ("ontem", SECRET, 100),
        ("2026-11-01T00:00:00Z", "", 100),
        ("2026-11-01T00:00:00Z", SECRET, 5000),
    ],
)
def test_usage_errors(inicio: str, secret: str, size: int) -> None:
    with pytest.raises(UsageError):
        fetch_pages(
            BASE,
            "c",
            secret,
            inicio,
            "2026-11-02T00:00:00Z",
            page_size=size,
            transport=httpx.MockTransport(FakePix(1)),
        )


def test_saves_raw_pages(data_dir: DataDir, tmp_path: Any) -> None:
    _pull(FakePix(3), data_dir, page_size=2, save_dir=tmp_path / "raw")
    saved = sorted((tmp_path / "raw").iterdir())
    assert len(saved) == 2
    assert json.loads(saved[0].read_text())["pix"][0]["valor"] == "1.00"
