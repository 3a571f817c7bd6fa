"""recon.lake: Delta commits on S3 (moto on loopback) are atomic and lose nothing."""

from __future__ import annotations

import pyarrow as pa
import pytest

from recon import lake
from tests.lake.conftest import S3, run_threads

SCHEMA = pa.schema([("key", pa.string()), ("amount_cents", pa.int64()), ("run", pa.string())])


def rows(run: str, keys: list[str]) -> pa.Table:
    return pa.table(
        {
            "key": keys,
            "amount_cents": pa.array([100 * (i + 1) for i in range(len(keys))], pa.int64()),
            "run": [run] * len(keys),
        },
        schema=SCHEMA,
    )


def read(table: lake.Table) -> pa.Table:
    files = [uri for uri, _parts, _size in table.files()]
    return (
        table.dataset(files, SCHEMA)
        .to_table()
        .sort_by([("run", "ascending"), ("key", "ascending")])
    )


def test_the_server_refuses_a_second_conditional_put(s3: S3) -> None:
    """What makes a Delta commit atomic on S3: only one PUT with If-None-Match wins."""
    client = s3.client()
    client.put_object(Bucket=s3.bucket, Key="k", Body=b"first", IfNoneMatch="*")
    with pytest.raises(client.exceptions.ClientError) as info:
        client.put_object(Bucket=s3.bucket, Key="k", Body=b"second", IfNoneMatch="*")
    assert info.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    assert client.get_object(Bucket=s3.bucket, Key="k")["Body"].read() == b"first"


def test_parse_accepts_object_store_uris_and_refuses_others() -> None:
    loc = lake.parse("s3://my-bucket/some/prefix/")
    assert (loc.store, loc.bucket, loc.prefix, loc.uri) == (
        "s3", "my-bucket", "some/prefix", "s3://my-bucket/some/prefix"
    )  # fmt: skip
    assert lake.parse("abfss://container/p").store == "abfs"
    assert lake.parse("gs://bucket").prefix == ""
    for bad in ("ftp://host/x", "http://bucket/x", "s3:///x", "s3://b/../x", "s3://bucket/a//b"):
        with pytest.raises(lake.LakeError):
            lake.parse(bad)
    assert lake.is_uri("s3://b/x") and not lake.is_uri("/srv/recon/data")


def test_append_commits_rows_partitions_and_metadata(s3: S3) -> None:
    table = lake.Table(lake.parse(s3.uri()), "things")
    assert table.load() is None and table.commits() == [] and table.files() == []
    v0 = table.append(rows("r1", ["a", "b"]), partition_by=["run"], metadata={"n": 1})
    v1 = table.append(rows("r2", ["c"]), partition_by=["run"], metadata={"n": 2})
    assert (v0, v1) == (0, 1)
    assert [c["recon"] for c in table.commits()] == [{"n": 1}, {"n": 2}]
    runs = sorted({parts["run"] for _uri, parts, _size in table.files()})
    assert runs == ["r1", "r2"]
    got = read(table)
    assert got.column("key").to_pylist() == ["a", "b", "c"]
    assert got.column("amount_cents").to_pylist() == [100, 200, 100]


def test_concurrent_appends_lose_no_commit(s3: S3) -> None:
    table = lake.Table(lake.parse(s3.uri()), "things")
    table.append(rows("r0", ["seed"]), partition_by=["run"], metadata={"writer": 0})

    def write(n: int) -> None:
        table.append(rows(f"r{n}", [f"k{n}"]), partition_by=["run"], metadata={"writer": n})

    assert run_threads(*(lambda n=n: write(n) for n in range(1, 5))) == []
    commits = table.commits()
    assert [c["version"] for c in commits] == [0, 1, 2, 3, 4]
    assert sorted(c["recon"]["writer"] for c in commits) == [0, 1, 2, 3, 4]
    assert sorted(read(table).column("key").to_pylist()) == ["k1", "k2", "k3", "k4", "seed"]


def test_replace_partition_replaces_one_partition_whole_and_races_with_other_writers(
    s3: S3,
) -> None:
    table = lake.Table(lake.parse(s3.uri()), "things")
    table.replace_partition(rows("r0", ["a", "b"]), "run", "r0")
    table.replace_partition(rows("r0", ["a", "b"]), "run", "r0")  # again: still one copy
    table.append(rows("o'ne", ["x"]), partition_by=["run"])
    table.replace_partition(rows("o'ne", ["y"]), "run", "o'ne")  # a quote in the value
    assert sorted(read(table).column("key").to_pylist()) == ["a", "b", "y"]

    def write(n: int) -> None:  # two machines publishing runs of their own at once
        if n % 2:
            table.replace_partition(rows(f"r{n}", [f"k{n}"]), "run", f"r{n}", metadata={"w": n})
        else:
            table.append(rows(f"r{n}", [f"k{n}"]), partition_by=["run"], metadata={"w": n})

    assert run_threads(*(lambda n=n: write(n) for n in range(1, 5))) == []
    assert sorted(read(table).column("key").to_pylist()) == ["a", "b", "k1", "k2", "k3", "k4", "y"]


def test_a_partition_replaced_with_more_columns_adds_them_to_the_table(s3: S3) -> None:
    """A run file's contract that gained columns (the reasons' code and parameters) is
    published into a table an older version created: the older partitions read null."""
    table = lake.Table(lake.parse(s3.uri()), "things")
    table.replace_partition(rows("r0", ["a"]), "run", "r0")
    wider = rows("r1", ["b"]).append_column("reason_code", pa.array(["onramp_underpaid"]))
    table.replace_partition(wider, "run", "r1")
    files = [uri for uri, _parts, _size in table.files()]
    both = table.dataset(files, wider.schema).to_table().sort_by("run")
    assert both.column("reason_code").to_pylist() == [None, "onramp_underpaid"]


def test_concurrent_merges_store_each_key_once(s3: S3) -> None:
    """Three writers import overlapping rows at once: every key is stored exactly once,
    and the rows inserted add up to the keys (a losing MERGE is re-run, not dropped)."""
    table = lake.Table(lake.parse(s3.uri()), "lines")
    table.append(rows("seed", ["a"]))
    batches = [["a", "b", "c"], ["b", "c", "d"], ["c", "d", "e", "f"]]
    inserted: list[int] = []
    conflicts: list[int] = []

    def merge(keys: list[str]) -> None:
        inserted.append(table.merge_new(rows("x", keys), ["key"], on_conflict=conflicts.append))

    assert run_threads(*(lambda b=b: merge(b) for b in batches)) == []
    keys = read(table).column("key").to_pylist()
    assert sorted(keys) == ["a", "b", "c", "d", "e", "f"]
    assert sum(inserted) == 5
    # re-importing everything adds nothing
    assert table.merge_new(rows("x", ["a", "b", "c", "d", "e", "f"]), ["key"]) == 0


def test_a_crash_between_data_files_and_commit_leaves_nothing_visible(s3: S3) -> None:
    """The storage refuses the commit entry after the data files were uploaded: readers
    still see the previous version, and the uploaded files are listed by no commit."""
    table = lake.Table(lake.parse(s3.uri()), "things")
    table.append(rows("r1", ["a"]), partition_by=["run"], metadata={"n": 1})
    before = table.files()
    s3.fail_commits()
    with pytest.raises(lake.LakeError, match="commit failed"):
        table.append(rows("r2", ["b", "c"]), partition_by=["run"], metadata={"n": 2})
    s3.fail_commits(False)
    assert (s3.faults / "refused.log").read_text().strip()  # the commit itself was refused
    assert table.version() == 0
    assert table.files() == before
    assert [c["recon"] for c in table.commits()] == [{"n": 1}]
    assert read(table).column("key").to_pylist() == ["a"]
    # the data files did reach the bucket: they are there, and nobody lists them
    on_store = [k for k in s3.keys("data/things/") if k.endswith(".parquet")]
    committed = {uri.removeprefix(f"s3://{s3.bucket}/") for uri, _p, _s in table.files()}
    orphans = [k for k in on_store if k not in committed]
    assert orphans and all("run=r2/" in k for k in orphans)
    # the next writer commits normally, at the next version
    assert table.append(rows("r3", ["d"]), partition_by=["run"]) == 1
    assert read(table).column("key").to_pylist() == ["a", "d"]


def test_check_names_what_is_wrong_in_one_line(s3: S3, monkeypatch: pytest.MonkeyPatch) -> None:
    lake.check(lake.parse(s3.uri()))  # fine
    with pytest.raises(lake.LakeError, match="does not exist"):
        lake.check(lake.parse(f"s3://{s3.bucket}-missing/x"))
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    with pytest.raises(lake.LakeError, match="cannot reach"):
        lake.check(lake.parse(f"s3://{s3.bucket}-elsewhere/x"))
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(lake.LakeError, match="AWS_SECRET_ACCESS_KEY is not"):
        lake.check(lake.parse(f"s3://{s3.bucket}-nokeys/x"))


def test_replace_files_swaps_files_in_one_commit_and_loses_no_race(s3: S3) -> None:
    """Two files of one partition replaced by one commit (remove + add), the other
    partition's file untouched; a replacement read before another writer removed the same
    file commits nothing, and its upload is deleted again."""
    table = lake.Table(lake.parse(s3.uri()), "things")
    table.append(rows("r1", ["a", "b"]), partition_by=["run"])
    table.append(rows("r1", ["c"]), partition_by=["run"])
    table.append(rows("r2", ["d"]), partition_by=["run"])
    delta = table.load()
    files = [f for f in table.data_files(delta) if f.partition["run"] == "r1"]
    assert len(files) == 2
    late = table.load()  # another writer, reading the same version
    uploads_before = set(s3.keys())
    changed = [(f, table.read_file(f).set_column(1, "amount_cents", pa.array([1] * 2)
                if table.read_file(f).num_rows == 2 else pa.array([1])))
               for f in files]  # fmt: skip
    written = table.replace_files(delta, changed, metadata={"erase": {"files": 2}})
    assert [f.partition for f in written] == [{"run": "r1"}, {"run": "r1"}]
    got = {(r["key"], r["amount_cents"]) for r in read(table).to_pylist()}
    assert got == {("a", 1), ("b", 1), ("c", 1), ("d", 100)}
    assert sorted(f.partition["run"] for f in table.data_files()) == ["r1", "r1", "r2"]
    assert table.commits()[-1]["recon"] == {"erase": {"files": 2}}
    assert len(set(s3.keys()) - uploads_before) == 3  # two files and one commit entry
    with pytest.raises(lake.CommitConflict):
        table.replace_files(late, [(files[0], table.read_file(files[0]))])
    assert len(set(s3.keys()) - uploads_before) == 3  # its upload deleted again
    assert read(table).num_rows == 4


def test_purge_removed_deletes_only_marked_commits_files_and_their_stats(s3: S3) -> None:
    """The files a marked commit removed are deleted, their min/max values dropped from the
    commit and the checkpoint naming them; a file an unmarked commit removed stays, unless
    `holding` picks it; every version still opens."""
    from deltalake import DeltaTable

    table = lake.Table(lake.parse(s3.uri()), "things")
    table.append(rows("r1", ["secret-a", "b"]), partition_by=["run"])
    table.append(rows("r2", ["secret-c", "d"]), partition_by=["run"])
    table.append(rows("r3", ["e"]), partition_by=["run"])
    DeltaTable(table.uri, storage_options=table.options).create_checkpoint()
    assert any("secret-a" in body for body in _log_texts(s3))
    by_run = {f.partition["run"]: f for f in table.data_files()}
    scrubbed = table.read_file(by_run["r1"]).set_column(0, "key", pa.array(["x", "b"]))
    table.replace_files(table.load(), [(by_run["r1"], scrubbed)], metadata={"erase": {}})
    table.replace_files(table.load(), [(by_run["r2"], table.read_file(by_run["r2"]))])
    table.replace_files(table.load(), [(by_run["r3"], table.read_file(by_run["r3"]))])
    keys = set(s3.keys())
    purged = table.purge_removed(
        "erase", holding=lambda files: {f.path for f in files if f.partition["run"] == "r2"}
    )
    gone = keys - set(s3.keys())
    assert {u.removeprefix(f"s3://{s3.bucket}/") for u in purged.deleted} == gone
    assert {k.split("/")[2] for k in gone} == {"run=r1", "run=r2"}  # r3's stays
    assert purged.log_entries == 3  # two commit entries and the checkpoint
    assert not any("secret" in body for body in _log_texts(s3))
    for version in range(table.version() or 0):
        DeltaTable(table.uri, version=version, storage_options=table.options).file_uris()
    again = table.purge_removed("erase")
    assert (again.deleted, again.log_entries) == ([], 0)
    assert sorted(read(table).column("key").to_pylist()) == ["b", "d", "e", "secret-c", "x"]


def _log_texts(s3: S3) -> list[str]:
    """Every log object of the bucket as text (a checkpoint's values as Python reprs)."""
    import io

    import pyarrow.parquet as pq

    client, out, names = s3.client(), [], s3.keys()
    for key in names:
        if "/_delta_log/" not in key:
            continue
        body = client.get_object(Bucket=s3.bucket, Key=key)["Body"].read()
        out.append(
            str(pq.read_table(io.BytesIO(body)).to_pylist())
            if key.endswith(".parquet")
            else body.decode()
        )
    return out


def test_a_filter_pushed_into_files_deltalake_wrote_as_string_views(tmp_path) -> None:
    """deltalake writes texts as Arrow string views, older files hold plain strings: DuckDB's
    filters pushed into the dataset of both kinds of file select the same rows."""
    import duckdb
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.fs as pafs
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"a": pa.array(["x", "y"], pa.string_view())}), tmp_path / "v.parquet")
    pq.write_table(pa.table({"a": pa.array(["x", "z"], pa.string())}), tmp_path / "s.parquet")
    files = [str(tmp_path / "v.parquet"), str(tmp_path / "s.parquet")]
    declared = pa.schema([("a", pa.string())])
    dataset = ds.FileSystemDataset.from_paths(
        files, schema=declared, format=ds.ParquetFileFormat(), filesystem=pafs.LocalFileSystem()
    )
    con = duckdb.connect()
    con.register("t", lake.with_views(dataset))
    assert sorted(con.sql("SELECT a FROM t WHERE a = 'x'").fetchall()) == [("x",), ("x",)]
    assert con.sql("SELECT count(*) FROM t WHERE a IN ('y', 'z')").fetchall() == [(2,)]
    assert con.sql("DESCRIBE t").fetchall()[0][1] == "VARCHAR"
