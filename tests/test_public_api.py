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
