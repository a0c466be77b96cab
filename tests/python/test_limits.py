"""Memory is bounded whatever the input: a decompression bomb is refused while inflating.

A 1.5 GiB value packed into a ~1.5 MiB deflate block must be refused (quarantined as
`too-large`, naming the block limit) by a `floe ingest` process whose peak RSS stays far below
what the value would take: the block is inflated as a stream that stops at `max_block_bytes`.
The peak is the process's own, from `wait4`.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "bench"))
import memory  # noqa: E402  (the benchmark's bomb writer and measured runner)

FLOE = os.environ.get("FLOE_BIN", str(ROOT / "target" / "release" / "floe"))
MIB = 1024 * 1024


def test_a_decompression_bomb_is_refused_in_bounded_memory(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    on_disk = memory.write_bomb(inputs / "bomb.avro", 1536 * MIB)
    assert on_disk < 4 * MIB
    code, rss, err = memory.ingest(FLOE, inputs, tmp_path / "wh", 64)
    assert code in (0, 2), err
    listed = subprocess.run(
        [FLOE, "quarantine", "list", "--warehouse", str(tmp_path / "wh")], capture_output=True, text=True
    )
    assert "bomb.avro" in listed.stdout and "too-large" in listed.stdout, listed.stdout + listed.stderr
    assert "max_block_bytes" in listed.stdout, listed.stdout
    assert rss < 256 * MIB, f"peak RSS {rss / MIB:.0f} MiB while refusing a 1.5 GiB bomb"


def test_null_fixed_values_cannot_inflate_memory(tmp_path):
    """A null `fixed(n)` takes one byte of the file and n bytes once decoded: 2,000 nulls of a
    1 MiB fixed are 2 GiB of zeros from a file of a few KiB. Rows are decoded in batches small
    enough for the limits to stop it early; a fixed wider than one value may be is refused
    before decoding."""
    import fastavro

    cases = [
        ("wide-nulls", MIB, 2000, "decoded data passes the limit"),
        ("huge-fixed", 1 << 30, 1, "max_value_bytes"),
    ]
    for name, size, rows, reason in cases:
        inputs = tmp_path / name
        inputs.mkdir()
        schema = {"type": "record", "name": "R", "fields": [
            {"name": "id", "type": "long"},
            {"name": "blob", "type": ["null", {"type": "fixed", "name": "F", "size": size}]},
        ]}
        with open(inputs / f"{name}.avro", "wb") as f:
            fastavro.writer(f, fastavro.parse_schema(schema), [{"id": i, "blob": None} for i in range(rows)],
                            codec="deflate")
        wh = tmp_path / f"wh-{name}"
        code, rss, err = memory.run_measured(
            [FLOE, "ingest", str(inputs), "--warehouse", str(wh), "--table", "t.fixed", "--writers", "1"],
            env={"FLOE_MAX_DECODED_BYTES": str(128 * MIB)},
        )
        assert code == 2, err
        assert rss < 384 * MIB, f"{name}: peak RSS {rss / MIB:.0f} MiB under a 128 MiB decoded limit"
        listed = subprocess.run(
            [FLOE, "quarantine", "list", "--warehouse", str(wh)], capture_output=True, text=True
        ).stdout
        assert f"{name}.avro" in listed and "too-large" in listed and reason in listed, listed
