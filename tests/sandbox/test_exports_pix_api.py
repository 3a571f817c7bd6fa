"""The BACEN-style API Pix served on the sandbox: OAuth2 client credentials, GET /pix."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from starlette.applications import Starlette

from recon.sandbox.compose import Sandbox, build_world
from recon.sandbox.pix_api import PixCredentials, TokenStore, pix_routes
from recon.sandbox.serving import run_in_thread

INICIO = "2026-10-01T00:00:00-03:00"
FIM = "2026-11-02T00:00:00-03:00"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return build_world(seed=5, days=2, intents_per_day=60)


@pytest.fixture(scope="module")
def served(sandbox: Sandbox) -> Iterator[tuple[httpx.Client, Sandbox]]:
    with run_in_thread(sandbox.app()) as base_url, httpx.Client(base_url=base_url) as http:
        yield http, sandbox


def _token(http: httpx.Client, creds: PixCredentials) -> str:
    resp = http.post(
        "/oauth/token",
        auth=(creds.client_id, creds.client_secret),
        data={"grant_type": "client_credentials"},
    )
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] > 0
    return str(body["access_token"])


def _pix(http: httpx.Client, token: str, **params: str) -> httpx.Response:
    query = {"inicio": INICIO, "fim": FIM, **{k.replace("__", "."): v for k, v in params.items()}}
    return http.get("/pix", params=query, headers={"Authorization": f"Bearer {token}"})


def test_token_needs_the_right_client_and_grant(served):
    http, sandbox = served
    creds = sandbox.credentials
    assert http.post("/oauth/token", data={"grant_type": "client_credentials"}).status_code == 401
    wrong = http.post(
        "/oauth/token", auth=(creds.client_id, "nope"), data={"grant_type": "client_credentials"}
    )
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    garbage = http.post(
        "/oauth/token",
        headers={"Authorization": "Basic !!!not-base64"},
        data={"grant_type": "client_credentials"},
    )
    assert garbage.status_code == 401
    grant = http.post(
        "/oauth/token", auth=(creds.client_id, creds.client_secret), data={"grant_type": "password"}
    )
    assert grant.status_code == 400 and grant.json()["error"] == "unsupported_grant_type"


def test_pix_requires_a_bearer_token(served):
    http, _ = served
    assert http.get("/pix", params={"inicio": INICIO, "fim": FIM}).status_code == 401
    resp = _pix(http, "made-up-token")
    assert resp.status_code == 401
    assert resp.json()["type"].endswith("AcessoNegado")
    assert resp.headers["content-type"].startswith("application/problem+json")


def test_tokens_expire():
    now = [0.0]
    store = TokenStore(ttl=10, clock=lambda: now[0])
    token = store.issue()
    assert store.valid(token)
    now[0] = 10.0
    assert not store.valid(token) and not store.valid(token)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"inicio": None}, "inicio"),
        ({"fim": "yesterday"}, "fim"),
        ({"fim": "2026-11-01T00:00:00"}, "fim"),  # no offset
        ({"fim": "2026-09-01T00:00:00-03:00"}, "fim"),  # before inicio
        ({"paginacao.itensPorPagina": "0"}, "paginacao.itensPorPagina"),
        ({"paginacao.itensPorPagina": "1001"}, "paginacao.itensPorPagina"),
        ({"paginacao.paginaAtual": "-1"}, "paginacao.paginaAtual"),
        ({"paginacao.paginaAtual": "x"}, "paginacao.paginaAtual"),
        ({"cpf": "123"}, "cpf"),
        ({"cpf": "12345678909", "cnpj": "11222333000181"}, "cpf"),
        ({"cnpj": "1122233300018X"}, "cnpj"),
        ({"txid": "short"}, "txid"),
        ({"txIdPresente": "maybe"}, "txIdPresente"),
        ({"devolucaoPresente": "1"}, "devolucaoPresente"),
    ],
)
def test_bad_parameters_are_400_with_violations(served, params, field):
    http, sandbox = served
    token = _token(http, sandbox.credentials)
    query = {"inicio": INICIO, "fim": FIM}
    for key, value in params.items():
        if value is None:
            query.pop(key)
        else:
            query[key] = value
    resp = http.get("/pix", params=query, headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 400, resp.text
    body = resp.json()
    assert body["status"] == 400
    assert field in {v["propriedade"] for v in body["violacoes"]}


def test_pages_cover_every_received_pix_once(served):
    http, sandbox = served
    token = _token(http, sandbox.credentials)
    whole = _pix(http, token, paginacao__itensPorPagina="1000").json()
    total = whole["parametros"]["paginacao"]["quantidadeTotalDeItens"]
    credits = [m for m in sandbox.bank.movements if m.kind == "pix_in"]
    assert total == len(whole["pix"]) == len(credits)
    seen = []
    page = 0
    while True:
        body = _pix(http, token, paginacao__paginaAtual=str(page), paginacao__itensPorPagina="7")
        body = body.json()
        pag = body["parametros"]["paginacao"]
        assert pag["paginaAtual"] == page and pag["itensPorPagina"] == 7
        assert pag["quantidadeDePaginas"] == -(-total // 7)
        if not body["pix"]:
            break
        seen += [item["endToEndId"] for item in body["pix"]]
        page += 1
    assert seen == [item["endToEndId"] for item in whole["pix"]]
    assert page == pag["quantidadeDePaginas"]
    assert seen == sorted(
        seen, key=lambda e: next(i["horario"] for i in whole["pix"] if i["endToEndId"] == e)
    )


def test_filters(served):
    http, sandbox = served
    token = _token(http, sandbox.credentials)
    whole = _pix(http, token, paginacao__itensPorPagina="1000").json()["pix"]
    with_txid = [i for i in whole if "txid" in i]
    assert with_txid and len(with_txid) < len(whole)
    txid = with_txid[0]["txid"]
    assert [i["txid"] for i in _pix(http, token, txid=txid).json()["pix"]] == [txid]
    assert len(
        _pix(http, token, txIdPresente="true", paginacao__itensPorPagina="1000").json()["pix"]
    ) == len(with_txid)
    refunded = _pix(http, token, devolucaoPresente="true", paginacao__itensPorPagina="1000").json()[
        "pix"
    ]
    assert all(i["devolucoes"] for i in refunded)
    credit = next(
        m
        for m in sandbox.bank.movements
        if m.kind == "pix_in" and m.counterparty_document and len(m.counterparty_document) == 11
    )
    by_cpf = _pix(
        http, token, cpf=credit.counterparty_document, paginacao__itensPorPagina="1000"
    ).json()
    assert credit.end_to_end_id in {i["endToEndId"] for i in by_cpf["pix"]}
    assert by_cpf["parametros"]["cpf"] == credit.counterparty_document
    # a window with nothing in it
    empty = http.get(
        "/pix",
        params={"inicio": "2020-01-01T00:00:00Z", "fim": "2020-01-02T00:00:00Z"},
        headers={"Authorization": f"Bearer {token}"},
    ).json()
    assert empty["pix"] == [] and empty["parametros"]["paginacao"]["quantidadeDePaginas"] == 1


def test_served_pix_equals_the_exported_file(served, tmp_path):
    from recon.sandbox.exports import export_statements

    http, sandbox = served
    token = _token(http, sandbox.credentials)
    served_items = _pix(http, token, paginacao__itensPorPagina="1000").json()["pix"]
    written = export_statements(sandbox.bank, tmp_path)
    assert json.loads(written["pix.json"].read_bytes())["pix"] == served_items


def test_late_events_route_needs_a_key():
    sandbox = build_world(seed=5, days=2, intents_per_day=60)
    with run_in_thread(sandbox.app()) as base_url, httpx.Client(base_url=base_url) as http:
        assert http.post("/_sandbox/world/late-events").status_code == 401
        resp = http.post("/_sandbox/world/late-events", headers={"X-API-Key": sandbox.api_key})
        assert resp.status_code == 200
        expected = [f.intent_id for f in sandbox.truth.faults if f.fault == "status_regression"]
        assert sorted(resp.json()["applied"]) == sorted(expected)
        again = http.post("/_sandbox/world/late-events", headers={"X-API-Key": sandbox.api_key})
        assert again.json()["applied"] == []


def test_pix_routes_accept_a_bank_factory(sandbox):
    app = Starlette(routes=pix_routes(lambda: sandbox.bank, sandbox.credentials))
    with run_in_thread(app) as base_url, httpx.Client(base_url=base_url) as http:
        token = _token(http, sandbox.credentials)
        assert _pix(http, token).status_code == 200
