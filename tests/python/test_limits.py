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
