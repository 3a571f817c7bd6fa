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
            "reconcile",
            "sql",
        ]
    )


def test_unknown_attribute_raises() -> None:
    import pytest

    with pytest.raises(AttributeError):
        _ = recon.does_not_exist  # type: ignore[attr-defined]


def test_function_packages_are_callable_whatever_the_import_order() -> None:
    import importlib

    import recon.extract.walk
    import recon.reconcile.runs
    import recon.sql as sql_package

    for name, target in [
        ("extract", "recon.extract.snapshot"),
        ("reconcile", "recon.reconcile.runs"),
        ("sql", "recon.catalog"),
    ]:
        obj = getattr(recon, name)
        assert callable(obj), name
        assert obj is importlib.import_module(f"recon.{name}")
        assert callable(getattr(importlib.import_module(target), name))
    assert sql_package is recon.sql


def test_recon_sql_returns_a_dataframe(data_dir) -> None:  # type: ignore[no-untyped-def]
    df = recon.sql("select count(*) as n from intents", data_dir)
    assert list(df.columns) == ["n"] and int(df.iloc[0, 0]) == 0
