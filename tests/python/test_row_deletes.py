"""Another engine's row-level deletes on a table Floe writes. PyIceberg plays the engine: it
writes position and equality delete files and commits them in a `delete` snapshot, as a
merge-on-read `DELETE` in Spark or Trino does (through PyIceberg's own manifest and snapshot
writers). Floe's compaction then drops exactly the deleted rows, keeps every other row and value,
removes the delete files it leaves dangling, and PyIceberg reads the result back.
"""

import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat, ManifestContent, ManifestWriterV2
from pyiceberg.table.snapshots import Operation
from pyiceberg.table.update.snapshot import _FastAppendFiles
from test_pyiceberg import catalog, floe

TABLE = "lake.deleted"
FILE_PATH_ID, POS_ID = 2147483546, 2147483545


class _DeleteManifestWriter(ManifestWriterV2):
    def content(self):
        return ManifestContent.DELETES

    @property
    def _meta(self):
        return {**super()._meta, "content": "deletes"}


class _RowDelta(_FastAppendFiles):
    """A row delta of delete files alone: Iceberg Java's `delete` snapshot of a merge-on-read
    DELETE (PyIceberg has no public API for it)."""

    def new_manifest_writer(self, spec):
        return _DeleteManifestWriter(spec, self.schema(), self.new_manifest_output(), self._snapshot_id,
                                     self._compression)


def commit_deletes(table, files):
    with table.transaction() as tx:
        delta = _RowDelta(Operation.DELETE, tx, tx._table.io)
        for f in files:
            delta.append_data_file(f)
        delta.commit()


def delete_entry(path: Path, content, partition, rows, spec_id, equality_ids=None):
    return DataFile.from_args(
        content=content, file_path=f"file://{path}", file_format=FileFormat.PARQUET, partition=partition,
        record_count=rows, file_size_in_bytes=path.stat().st_size, column_sizes={}, value_counts={},
        null_value_counts={}, nan_value_counts={}, lower_bounds={}, upper_bounds={}, split_offsets=None,
        equality_ids=equality_ids, sort_order_id=None, spec_id=spec_id, key_metadata=None)


def position_delete_file(dst: Path, rows):
    """A position delete file of (data file URI, position) pairs, sorted as the spec asks."""
    rows = sorted(rows)
    schema = pa.schema([
        pa.field("file_path", pa.string(), nullable=False, metadata={"PARQUET:field_id": str(FILE_PATH_ID)}),
        pa.field("pos", pa.int64(), nullable=False, metadata={"PARQUET:field_id": str(POS_ID)}),
    ])
    pq.write_table(pa.table([[p for p, _ in rows], [n for _, n in rows]], schema=schema), dst)
    return dst


def equality_delete_file(dst: Path, column: pa.Array, field_id: int):
    schema = pa.schema([pa.field("event_id", column.type, nullable=False,
                                 metadata={"PARQUET:field_id": str(field_id)})])
    pq.write_table(pa.table([column], schema=schema), dst)
    return dst


def setup(tmp_path):
    wh = tmp_path / "wh"
    for seed in (11, 12, 13):
        src = tmp_path / f"in{seed}"
        floe("gen", "--out", src, "--files", 2, "--events-per-file", 60, "--seed", seed, "--dup-rate", 0,
             "--tenants", 2)
        floe("ingest", src, "--warehouse", wh, "--table", TABLE, "--partition-by", "identity(tenant_id)",
             "--sort-by", "event_time", "--dedup-key", "event_id")
    return wh


def live_delete_files(table):
    """The live delete files of the current snapshot, from its manifests (`inspect.delete_files`
    fails on a table with a uuid column)."""
    manifests = table.current_snapshot().manifests(table.io)
    return [e.data_file.file_path for m in manifests if m.content == ManifestContent.DELETES
            for e in m.fetch_manifest_entry(table.io)]


def by_key(t: pa.Table):
    return sorted(t.to_pylist(), key=lambda r: str(r["event_id"]))


def files_of(table):
    """Live data files by partition (tenant), and the rows of each as PyIceberg reads them."""
    out = {}
    for task in table.scan().plan_files():
        f = task.file
        rows = pq.read_table(f.file_path.removeprefix("file://"))
        out.setdefault(f.partition[0], []).append((f, rows))
    return out


def test_compaction_applies_pyicebergs_position_deletes_and_removes_them(tmp_path):
    wh = setup(tmp_path)
    table = catalog(wh).load_table(TABLE)
    before = table.scan().to_arrow()
    files = files_of(table)
    tenant, [(f1, r1), (f2, r2), *_] = next(iter(files.items()))
    deleted = {r1["event_id"][0].as_py(), r1["event_id"][5].as_py(), r2["event_id"][3].as_py()}
    d1 = position_delete_file(tmp_path / "pos-1.parquet", [(f1.file_path, 0)])
    d2 = position_delete_file(tmp_path / "pos-2.parquet", [(f1.file_path, 5), (f2.file_path, 3)])
    spec_id = table.metadata.default_spec_id
    commit_deletes(table, [
        delete_entry(d1, DataFileContent.POSITION_DELETES, f1.partition, 1, spec_id),
        delete_entry(d2, DataFileContent.POSITION_DELETES, f1.partition, 2, spec_id),
    ])
    table = catalog(wh).load_table(TABLE)
    seen = table.scan().to_arrow()
    assert seen.num_rows == before.num_rows - 3
    assert not deleted & set(seen["event_id"].to_pylist()), "PyIceberg applies its own deletes"
    assert len(live_delete_files(table)) == 2

    out = floe("compact", "--warehouse", wh, "--table", TABLE, "--full")
    assert "rewrite(s) committed" in out.stdout, out.stdout
    table = catalog(wh).load_table(TABLE)
    after = table.scan().to_arrow()
    assert by_key(after) == by_key(seen), "exactly the rows a reader saw, every value as it was"
    assert all(not t.delete_files for t in table.scan().plan_files()), "no delete file applies any more"
    assert live_delete_files(table) == [], "and none is live"
    summary = table.current_snapshot().summary
    assert summary.operation == Operation.REPLACE
    assert summary["total-delete-files"] == "0" and summary["total-position-deletes"] == "0", summary
    assert summary["removed-position-delete-files"] == "2", summary


def test_compaction_applies_equality_deletes_within_their_partition(tmp_path):
    """PyIceberg cannot read equality deletes; once Floe has applied them and removed their
    files, it can, and reads exactly the rows the deletes leave. An equality delete of one
    partition does not reach a row of the same key value in another."""
    wh = setup(tmp_path)
    table = catalog(wh).load_table(TABLE)
    before = table.scan().to_arrow()
    files = files_of(table)
    (t1, first), (t2, second) = list(files.items())[:2]
    (_, r1), (_, r2) = first[0], first[1]
    # Two keys of t1, and one of t2 written into t1's delete file: only t1's are deleted.
    ids = pa.concat_arrays([r1["event_id"].combine_chunks().take([1]), r2["event_id"].combine_chunks().take([2]),
                            second[0][1]["event_id"].combine_chunks().take([0])])
    field_id = table.schema().find_field("event_id").field_id
    d = equality_delete_file(tmp_path / "eq.parquet", ids, field_id)
    commit_deletes(table, [delete_entry(d, DataFileContent.EQUALITY_DELETES, first[0][0].partition, 3,
                                        table.metadata.default_spec_id, equality_ids=[field_id])])
    gone = set(ids.to_pylist()[:2])
    expected = [r for r in by_key(before) if not (r["event_id"] in gone and r["tenant_id"] == t1)]
    assert len(expected) == before.num_rows - 2
    assert len(live_delete_files(catalog(wh).load_table(TABLE))) == 1

    out = floe("compact", "--warehouse", wh, "--table", TABLE, "--full")
    assert "rewrite(s) committed" in out.stdout, out.stdout
    table = catalog(wh).load_table(TABLE)
    assert live_delete_files(table) == [], "the equality delete file was removed"
    assert by_key(table.scan().to_arrow()) == expected
    assert table.current_snapshot().summary["total-equality-deletes"] == "0"
