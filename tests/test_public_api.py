import recon


def test_exported_names_are_exactly_the_intended_ones() -> None:
    assert recon.__all__ == sorted(
        [
            "AsyncClient",
            "Client",
            "DataDir",
            "ReconError",
            "__version__",
            "connect",
            "extract",
            "import_statements",
            "pair",
            "reconcile",
            "sql",
        ]
    )


def test_unknown_attribute_raises() -> None:
    import pytest

    with pytest.raises(AttributeError):
        _ = recon.does_not_exist  # type: ignore[attr-defined]


def test_public_functions_are_plain_functions_whatever_the_import_order() -> None:
    import importlib
    import inspect

    import recon.catalog
    import recon.extraction.walk
    import recon.reconciliation.runs

    for name, target in [
        ("extract", "recon.extraction.snapshot"),
        ("reconcile", "recon.reconciliation.runs"),
        ("sql", "recon.catalog"),
    ]:
        obj = getattr(recon, name)
        assert inspect.isfunction(obj), name
        assert obj is getattr(importlib.import_module(target), name)


def test_recon_sql_returns_a_dataframe(data_dir) -> None:  # type: ignore[no-untyped-def]
    df = recon.sql("select count(*) as n from intents", data_dir)
    assert list(df.columns) == ["n"] and int(df.iloc[0, 0]) == 0
