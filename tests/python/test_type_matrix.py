"""File type x table type, for one field, through `floe ingest`, read back by PyIceberg.

For each Avro type T_table a table is created (by `floe ingest` on first sight) from a file
whose records are {id: long, amount: ["null", T_table]}. Then one file per Avro type T_file,
{id: long, amount: ["null", T_file]}, goes into that table, all in one `floe ingest` call.
Each file is accepted or refused on its own, by this rule:

  * it lands, with exactly the values written, if and only if the Iceberg type of T_file is the
    Iceberg type of T_table, or one of them is an allowed Iceberg promotion of the other:
    int -> long, float -> double, decimal(P, S) -> decimal(P2, S) with P2 > P (a wider file
    promotes the table's column: schema evolution, so the column ends as the widest that landed);
  * otherwise it is quarantined: none of its rows are in the table, and
    `floe quarantine list` shows it with a reason naming the field (`amount`), the file's
    Iceberg type and the table's Iceberg type. A run that quarantines a file exits 2 (not a
    failure: every other file landed; see cli/src/ingest.rs), as test_pyiceberg.py expects too.

Values are chosen so that a lossy cast would show (longs over 2^31 and 2^53, doubles like 1e300,
strings such as "12", microsecond parts in micros types) and every file carries one null.
The expected values are Python's, as fastavro was given them (a float is compared as the
float64 of the float32 written), compared type-strictly (True is not 1, 7 is not 7.0).
The Iceberg type names are iceberg-rust's (`decimal(10, 2)`, `fixed(16)`); the reason check
tolerates the spacing in decimals and `fixed[16]` for fixed.
"""

import dataclasses
import datetime as dt
import os
import re
import struct
import subprocess
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

import fastavro
import pytest
from pyiceberg.catalog.sql import SqlCatalog

ROOT = Path(__file__).resolve().parents[2]
FLOE = os.environ.get("FLOE_BIN", str(ROOT / "target" / "release" / "floe"))
NAMESPACE = "matrix"
UTC = dt.timezone.utc


@dataclasses.dataclass(frozen=True)
class AvroType:
    name: str  # test id, and part of file and table names
    iceberg: str  # the Iceberg type Floe maps it to, as iceberg-rust prints it
    avro: Callable[[str], Any]  # tag -> the Avro type (the tag names fixed types distinctly)
    values: tuple  # non-null values fastavro writes

    def read_back(self, v):
        """The value a reader must see once `v` (written as this type) has landed exactly."""
        if v is not None and self.name == "float":
            return struct.unpack("<f", struct.pack("<f", v))[0]
        return v


def logical(base, name, **extra):
    return lambda tag: {"type": base, "logicalType": name, **extra}


def decimal(p, s):
    return logical("bytes", "decimal", precision=p, scale=s)


TYPES = [
    AvroType("boolean", "boolean", lambda tag: "boolean", (True, False, True)),
    AvroType("int", "int", lambda tag: "int", (7, -3, 2**31 - 1)),
    AvroType("long", "long", lambda tag: "long", (2**31 + 5, 2**53 + 1, -7)),
    AvroType("float", "float", lambda tag: "float", (1.5, -2.25, 0.1)),
    AvroType("double", "double", lambda tag: "double", (1.5, -2.25, 1e300)),
    AvroType("string", "string", lambda tag: "string", ("abc", "12", "1.5")),
    AvroType("bytes", "binary", lambda tag: "bytes", (b"abc", b"\x00\xff", b"12")),
    AvroType(
        "fixed16",
        "fixed(16)",
        lambda tag: {"type": "fixed", "name": f"fixed16_{tag}", "size": 16},
        (bytes(range(16)), b"\xff" * 16, b"0123456789abcdef"),
    ),
    AvroType(
        "decimal_10_2", "decimal(10, 2)", decimal(10, 2), (Decimal("12345678.91"), Decimal("-0.05"), Decimal("7.00"))
    ),
    AvroType(
        "decimal_20_2",
        "decimal(20, 2)",
        decimal(20, 2),
        (Decimal("123456789012345678.91"), Decimal("-0.05"), Decimal("7.00")),
    ),
    AvroType(
        "decimal_20_4",
        "decimal(20, 4)",
        decimal(20, 4),
        (Decimal("1234567890123456.7891"), Decimal("-0.0005"), Decimal("7.0000")),
    ),
    AvroType("date", "date", logical("int", "date"), (dt.date(2024, 2, 29), dt.date(1969, 12, 31), dt.date(1970, 1, 1))),
    AvroType(
        "time_millis",
        "time",
        logical("int", "time-millis"),
        (dt.time(12, 34, 56, 789000), dt.time(0, 0, 0, 1000), dt.time(23, 59, 59, 999000)),
    ),
    AvroType(
        "time_micros",
        "time",
        logical("long", "time-micros"),
        (dt.time(12, 34, 56, 789123), dt.time(0, 0, 0, 1), dt.time(23, 59, 59, 999999)),
    ),
    AvroType(
        "timestamp_millis",
        "timestamptz",
        logical("long", "timestamp-millis"),
        (
            dt.datetime(2024, 2, 29, 12, 34, 56, 789000, tzinfo=UTC),
            dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
            dt.datetime(2001, 9, 9, 1, 46, 40, tzinfo=UTC),
        ),
    ),
    AvroType(
        "timestamp_micros",
        "timestamptz",
        logical("long", "timestamp-micros"),
        (
            dt.datetime(2024, 2, 29, 12, 34, 56, 789123, tzinfo=UTC),
            dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            dt.datetime(2001, 9, 9, 1, 46, 40, 1, tzinfo=UTC),
        ),
    ),
    AvroType(
        "local_timestamp_millis",
        "timestamp",
        logical("long", "local-timestamp-millis"),
        (
            dt.datetime(2024, 2, 29, 12, 34, 56, 789000),
            dt.datetime(1969, 12, 31, 23, 59, 59, 999000),
            dt.datetime(2001, 9, 9, 1, 46, 40),
        ),
    ),
    AvroType(
        "local_timestamp_micros",
        "timestamp",
        logical("long", "local-timestamp-micros"),
        (
            dt.datetime(2024, 2, 29, 12, 34, 56, 789123),
            dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
            dt.datetime(2001, 9, 9, 1, 46, 40, 1),
        ),
    ),
    AvroType(
        "uuid",
        "uuid",
        logical("string", "uuid"),
        (uuid.UUID("12345678-1234-5678-1234-567812345678"), uuid.UUID(int=1), uuid.UUID(int=2**128 - 1)),
    ),
]
assert len({t.name for t in TYPES}) == len(TYPES) == 19

DECIMAL = re.compile(r"decimal\((\d+), (\d+)\)")


def promotes(f: str, t: str) -> bool:
    """Whether Iceberg type f is t or an allowed Iceberg promotion to t."""
    if f == t or (f, t) in {("int", "long"), ("float", "double")}:
        return True
    fd, td = DECIMAL.fullmatch(f), DECIMAL.fullmatch(t)
    return bool(fd and td and fd[2] == td[2] and int(td[1]) > int(fd[1]))


def may_land(file: AvroType, table: AvroType) -> bool:
    """The rule: same Iceberg type, or an allowed Iceberg promotion either way (a wider file
    type promotes the column: schema evolution)."""
    return promotes(file.iceberg, table.iceberg) or promotes(table.iceberg, file.iceberg)


def mentions(reason: str, iceberg_name: str) -> bool:
    """Whether `reason` names the type as a word (`timestamp` is not found in `timestamptz`)."""
    if m := DECIMAL.fullmatch(iceberg_name):
        pattern = rf"decimal\(\s*{m[1]}\s*,\s*{m[2]}\s*\)"
    elif m := re.fullmatch(r"fixed\((\d+)\)", iceberg_name):
        pattern = rf"fixed[(\[]\s*{m[1]}\s*[)\]]"
    else:
        pattern = re.escape(iceberg_name)
    return re.search(rf"(?<![\w-]){pattern}(?![\w-])", reason) is not None


def floe(*args):
    return subprocess.run([FLOE, *map(str, args)], capture_output=True, text=True)


def write_avro(path: Path, avro_type: AvroType, tag: str, first_id: int) -> dict:
    """One file of `avro_type` values plus a null, ids from `first_id`; returns {id: value}."""
    schema = {
        "type": "record",
        "name": "matrix_row",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "amount", "type": ["null", avro_type.avro(tag)]},
        ],
    }
    values = [*avro_type.values, None]
    rows = [{"id": first_id + i, "amount": v} for i, v in enumerate(values)]
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), rows)
    return {r["id"]: r["amount"] for r in rows}


def read_value(table_type: AvroType, v):
    """PyArrow's rendering of a table value, in the Python type fastavro was given."""
    if table_type.iceberg == "uuid" and isinstance(v, bytes):
        return uuid.UUID(bytes=v)
    return v


def same(a, b) -> bool:
    """Type-strict equality; decimals also keep their scale."""
    if type(a) is not type(b) or a != b:
        return False
    return not isinstance(a, Decimal) or a.as_tuple().exponent == b.as_tuple().exponent


def quarantined(wh: Path) -> dict:
    """File name -> quarantine reason, from `floe quarantine list`."""
    p = floe("quarantine", "list", "--warehouse", wh)
    assert p.returncode == 0, f"floe quarantine list exited {p.returncode}\n{p.stdout}\n{p.stderr}"
    out = {}
    for line in p.stdout.splitlines():
        parts = line.split("\t", 3)
        if len(parts) == 4:
            out[parts[0].rsplit("/", 1)[-1]] = f"{parts[2]}: {parts[3]}"
    return out


@pytest.mark.parametrize("table_type", TYPES, ids=[t.name for t in TYPES])
def test_file_type_into_table_type(tmp_path, table_type):
    wh, src = tmp_path / "wh", tmp_path / "in"
    src.mkdir()
    ident = f"{NAMESPACE}.t_{table_type.name}"

    base = write_avro(src / "base.avro", table_type, "base", first_id=0)
    p = floe("ingest", src / "base.avro", "--warehouse", wh, "--table", ident)
    assert p.returncode == 0, f"creating {ident} exited {p.returncode}\n{p.stdout}\n{p.stderr}"

    # One file per type, ids 100*(k+1)..., so that no two files have the same content.
    files = {}
    for k, file_type in enumerate(TYPES):
        path = src / f"{k:02d}-{file_type.name}.avro"
        files[file_type.name] = (path, write_avro(path, file_type, f"f{k}", first_id=100 * (k + 1)))
    p = floe("ingest", *(path for path, _ in files.values()), "--warehouse", wh, "--table", ident)
    assert p.returncode in (0, 2), f"ingest exited {p.returncode}\n{p.stdout}\n{p.stderr}"

    table = SqlCatalog("floe", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}").load_table(ident)
    table_rows = table.scan().to_arrow().to_pylist()
    got = {r["id"]: read_value(table_type, r["amount"]) for r in table_rows}
    reasons = quarantined(wh)

    wrong = []
    # The column ends as the widest type that landed (a wider file promotes it).
    widest = table_type.iceberg
    for f in TYPES:
        if may_land(f, table_type) and promotes(widest, f.iceberg):
            widest = f.iceberg
    amount_type = str(table.schema().find_field("amount").field_type)
    if not mentions(amount_type, widest):
        wrong.append(f"table type is {amount_type}, not {widest}")
    base_got = {i: got.get(i, "<missing>") for i in base}
    if not all(same(base_got[i], table_type.read_back(v)) for i, v in base.items()):
        wrong.append(f"base file: wrote {list(base.values())}, got {list(base_got.values())}")
    unknown = sorted(set(got) - set(base) - {i for _, rows in files.values() for i in rows})
    if unknown:
        wrong.append(f"rows with ids no file has: {unknown}")
    if len(table_rows) != len(got):
        wrong.append(f"{len(table_rows)} rows for {len(got)} distinct ids: some landed twice")

    # Every table type refuses some file type, so the second run always quarantines something.
    if p.returncode != 2:
        wrong.append(f"exit code: expected 2 (files quarantined), got {p.returncode}")

    for file_type in TYPES:
        path, rows = files[file_type.name]
        cell = f"{file_type.name} ({file_type.iceberg}) -> {table_type.name} ({table_type.iceberg})"
        landed = {i: got[i] for i in rows if i in got}
        reason = reasons.get(path.name)
        if may_land(file_type, table_type):
            want = {i: file_type.read_back(v) for i, v in rows.items()}
            if reason is not None:
                wrong.append(f"{cell}: expected to land exactly, got quarantined: {reason}")
            elif landed.keys() != want.keys() or not all(same(landed[i], want[i]) for i in want):
                wrong.append(f"{cell}: expected {list(want.values())}, got {list(landed.values())}")
        else:
            if landed:
                wrong.append(
                    f"{cell}: expected quarantine, got landed: wrote {list(rows.values())}, "
                    f"read {list(landed.values())}"
                )
            if reason is None:
                wrong.append(f"{cell}: expected quarantine, but `floe quarantine list` does not show it")
            elif not all(mentions(reason, n) for n in ("amount", file_type.iceberg)) or not any(
                mentions(reason, n) for n in (table_type.iceberg, widest)
            ):
                wrong.append(
                    f"{cell}: quarantine reason should name `amount`, {file_type.iceberg} and "
                    f"{table_type.iceberg} (or {widest}, once promoted): {reason}"
                )

    assert not wrong, f"{len(wrong)} wrong cell(s) for table type {table_type.name}:\n" + "\n".join(wrong)
