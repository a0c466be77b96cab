"""Values at the edges of what Iceberg's text forms carry, through `floe ingest`, read back by
PyIceberg: partition values that JSON cannot hold (NaN, infinities) or that the iceberg crate
cannot format (a timestamp before 1970 with a fraction of a second) land exactly in their own
partitions, and a reader's partition pruning finds them; a `logicalType` written on a field
rather than on its type is no logical type (Avro's readers read a plain long), so a count of
milliseconds is never read as microseconds."""

import datetime as dt
import math
import os
import subprocess
from pathlib import Path

import fastavro
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import GreaterThan, IsNaN, LessThan

ROOT = Path(__file__).resolve().parents[2]
FLOE = os.environ.get("FLOE_BIN", str(ROOT / "target" / "release" / "floe"))


def floe(*args, expect=0):
    p = subprocess.run([FLOE, *map(str, args)], capture_output=True, text=True)
    assert p.returncode == expect, f"floe {' '.join(map(str, args))} exited {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def write(path, fields, records):
    schema = {"type": "record", "name": "r", "fields": fields}
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records)


def table(wh, name):
    return SqlCatalog("floe", uri=f"sqlite:///{wh / 'catalog.db'}", warehouse=f"file://{wh}").load_table(name)


def test_non_finite_doubles_are_their_own_partitions_and_readers_find_them(tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    src.mkdir()
    values = [math.inf, -math.inf, math.nan, 1.5, -0.0]
    for round in (0, 1):
        (src / str(round)).mkdir()
        for i, x in enumerate(values):
            write(src / str(round) / f"f{i}.avro", [{"name": "id", "type": "long"}, {"name": "x", "type": "double"}],
                  [{"id": i + 10 * round, "x": x}])
        floe("ingest", src / str(round), "--warehouse", wh, "--table", "edge.doubles", "--partition-by",
             "identity(x)", "--batch-objects", 10)
    # Compaction merges each partition's two files, its partition value carried exactly.
    out = floe("compact", "--warehouse", wh, "--table", "edge.doubles", "--full")
    assert "rewrite(s) committed" in out.stdout, out.stdout
    t = table(wh, "edge.doubles")
    assert len(list(t.scan().plan_files())) == len(values), "one file per partition after compaction"
    both = [(r["id"], r["x"]) for r in t.scan().to_arrow().to_pylist()]
    assert sorted(i for i, _ in both) == [0, 1, 2, 3, 4, 10, 11, 12, 13, 14]
    rows = {i: x for i, x in both if i < 10}
    assert rows[0] == math.inf and rows[1] == -math.inf and math.isnan(rows[2]) and rows[3] == 1.5
    assert rows[4] == 0.0 and math.copysign(1, rows[4]) == -1, "negative zero stays negative"
    parts = sorted(repr(f.file.partition[0]) for f in t.scan().plan_files())
    assert parts == sorted(repr(x) for x in values), f"one partition each, none null: {parts}"
    assert sorted(r["id"] for r in t.scan(row_filter=GreaterThan("x", 100.0)).to_arrow().to_pylist()) == [0, 10]
    assert sorted(r["id"] for r in t.scan(row_filter=LessThan("x", -100.0)).to_arrow().to_pylist()) == [1, 11]
    assert sorted(r["id"] for r in t.scan(row_filter=IsNaN("x")).to_arrow().to_pylist()) == [2, 12]


def test_timestamps_before_1970_with_fractions_partition_by_identity(tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    src.mkdir()
    moon = dt.datetime(1969, 7, 20, 20, 17, 40, 500000, tzinfo=dt.timezone.utc)
    later = dt.datetime(2024, 3, 1, 12, 0, 0, 123456, tzinfo=dt.timezone.utc)
    ts = {"type": "long", "logicalType": "timestamp-micros"}
    # One batch: a value the iceberg crate cannot format must not fail the good file beside it.
    write(src / "moon.avro", [{"name": "id", "type": "long"}, {"name": "ts", "type": ts}], [{"id": 1, "ts": moon}])
    write(src / "later.avro", [{"name": "id", "type": "long"}, {"name": "ts", "type": ts}], [{"id": 2, "ts": later}])
    floe("ingest", src, "--warehouse", wh, "--table", "edge.moon", "--partition-by", "identity(ts)",
         "--batch-objects", 10, "--writers", 1)
    t = table(wh, "edge.moon")
    assert sorted((r["id"], r["ts"]) for r in t.scan().to_arrow().to_pylist()) == [(1, moon), (2, later)]
    assert [r["id"] for r in t.scan(row_filter=LessThan("ts", "1970-01-01T00:00:00+00:00")).to_arrow().to_pylist()] == [1]


def test_a_logical_type_on_the_field_object_is_a_plain_long(tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    src.mkdir()
    # fastavro, like Java, ignores a field-level logicalType: it writes and reads plain longs.
    write(src / "f.avro", [{"name": "id", "type": "long"},
                           {"name": "ts", "type": "long", "logicalType": "timestamp-millis"}],
          [{"id": 1, "ts": 1_700_000_000_123}])
    floe("ingest", src, "--warehouse", wh, "--table", "edge.field_lt")
    t = table(wh, "edge.field_lt")
    assert str(t.schema().find_field("ts").field_type) == "long"
    assert t.scan().to_arrow().to_pylist() == [{"id": 1, "ts": 1_700_000_000_123}]


def test_nan_counts_keep_another_engines_delete_from_taking_nan_rows(tmp_path):
    """Iceberg's strict metrics evaluator (PyIceberg's, Java's) reads a missing NaN count as "no
    NaN": with bounds [1, 2] it would prove `x < 5` of every row of a file holding a NaN and
    drop the whole file, the NaN row with it. Floe writes the counts, so the NaN row stays."""
    src, wh = tmp_path / "in", tmp_path / "wh"
    src.mkdir()
    write(src / "f.avro", [{"name": "id", "type": "long"}, {"name": "x", "type": "double"}],
          [{"id": 1, "x": 1.0}, {"id": 2, "x": math.nan}, {"id": 3, "x": 2.0}])
    floe("ingest", src, "--warehouse", wh, "--table", "edge.nans")
    t = table(wh, "edge.nans")
    x = t.schema().find_field("x").field_id
    assert [f.file.nan_value_counts for f in t.scan().plan_files()] == [{x: 1}]
    t.delete("x < 5")
    assert [r["id"] for r in table(wh, "edge.nans").scan().to_arrow().to_pylist()] == [2]


def test_values_no_partition_or_time_of_day_carries_are_quarantined_alone(tmp_path):
    """A date beyond ~200,000 years under a `year` partition (the transform would give a null
    partition, and a reader's pruning would lose the row) and a time of day outside 00:00-24:00
    are quarantined with their reason; the good file of the same batch lands."""
    src, wh = tmp_path / "in", tmp_path / "wh"
    src.mkdir()
    fields = [{"name": "id", "type": "long"}, {"name": "d", "type": {"type": "int", "logicalType": "date"}},
              {"name": "t", "type": {"type": "long", "logicalType": "time-micros"}}]
    write(src / "a-good.avro", fields, [{"id": 1, "d": 19_000, "t": 3_600_000_000}])
    write(src / "b-far.avro", fields, [{"id": 2, "d": 100_000_000, "t": 0}])
    write(src / "c-time.avro", fields, [{"id": 3, "d": 19_000, "t": -5}])
    floe("ingest", src, "--warehouse", wh, "--table", "edge.far", "--partition-by", "year(d)",
         "--batch-objects", 10, expect=2)
    assert [r["id"] for r in table(wh, "edge.far").scan().to_arrow().to_pylist()] == [1]
    listed = floe("quarantine", "list", "--warehouse", wh).stdout
    assert "b-far.avro" in listed and "`d` holds the date 100000000 days" in listed, listed
    assert "c-time.avro" in listed and "`t` holds the time -5 µs" in listed, listed
