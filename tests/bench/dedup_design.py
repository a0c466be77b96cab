"""The design model behind exact dedup of random keys (issue 51; docs/ARCHITECTURE.md, "Random
keys: key runs"): per compaction tick, the dedup bytes one partition's tasks read as its history
grows, for four designs, and how long a duplicate may stay visible. Analytical, from stated
assumptions (no measurement: `make bench-dedup` measures what is built).

    .venv/bin/python tests/bench/dedup_design.py [--keys-per-tick 1e6]

Assumptions: a partition takes `n` new keys a tick (one tick: one minute); a key is 16 bytes in a
key column; a key-run entry is 24 bytes (a 128-bit hash of the key, the row's commit order and
where it lies); index pages are 16 KiB; a Lambda reads 200 MB/s. History is H ticks; 1x is 60
ticks (an hour), 16x 960.
"""

import argparse
import math

KEY, ENTRY, PAGE, READ_BPS = 16, 24, 16384, 200e6
GB = 1e9


def probe_key_columns(h, n):
    """Today: every compacted file's key column, at every tick."""
    return KEY * h * n


def probe_sorted_index(h, n):
    """A hash-sorted index of the whole history, probed by the tick's random keys: the pages
    they fall in (a page holds PAGE // ENTRY entries)."""
    pages = h * n / (PAGE // ENTRY)
    touched = pages * (1 - math.exp(-n / pages))
    return touched * PAGE


def levels(span, fanout):
    out = 0
    while fanout ** (out + 1) <= span:
        out += 1
    return out


def tiered_runs(h, n, fanout, cap=None):
    """Each tick writes a run of its keys; runs merge `fanout` at a time, and each new run is
    merge-joined with the previous run of its level (that join bounds how long a duplicate can
    wait). Amortized: the level-0 run, then per level its inputs read, the previous run read and
    the output written. `cap`: no run spans more ticks (a final merge when the partition closes
    finds what is further apart)."""
    depth = levels(h if cap is None else min(h, cap), fanout)
    return ENTRY * n * (1 + 3 * depth), depth


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--keys-per-tick", type=float, default=1e6)
    a = p.parse_args()
    n = a.keys_per_tick
    hs = [60, 240, 960, 1440]
    rows = [("today: every compacted file's key column", lambda h: probe_key_columns(h, n)),
            ("a hash-sorted index of all history, probed", lambda h: probe_sorted_index(h, n))]
    for f in (4, 8, 16):
        rows.append((f"key runs in tiers of {f}, uncapped", lambda h, f=f: tiered_runs(h, n, f)[0]))
    for f, k in ((4, 3), (8, 2)):
        rows.append((f"key runs in tiers of {f}, spans capped at {f ** k} ticks, final merge at close",
                     lambda h, f=f, k=k: tiered_runs(h, n, f, cap=f ** k)[0]))
    print(f"Dedup bytes read per tick for one partition of {n:,.0f} new keys a tick (GB), by history:\n")
    print("| design | " + " | ".join(f"{h} ticks" for h in hs) + " | 16x / 1x (960 / 60) |")
    print("|---|" + "---:|" * (len(hs) + 1))
    for name, cost in rows:
        print(f"| {name} | " + " | ".join(f"{cost(h) / GB:.2f}" for h in hs) + f" | **{cost(960) / cost(60):.2f}x** |")
    day = 1440 * n * ENTRY
    print(f"\nFinal merge of a day partition's runs: {day / GB:.1f} GB, {day / READ_BPS:.0f} s as one stream, "
          f"{day / 16 / READ_BPS:.0f} s in each of 16 hash ranges; {day / 1440 / 1e6:.0f} MB a tick amortized.")
    print("\nLongest a duplicate stays visible, in ticks after its later copy (runs merged with their predecessor; "
          "within the cap):\n")
    print("| copies apart (ticks) | " + " | ".join(str(g) for g in (1, 5, 30, 60)) + " |")
    print("|---|" + "---:|" * 4)
    for f in (4, 8):
        bound = [f ** max(0, math.ceil(math.log(g, f) - 1e-9)) for g in (1, 5, 30, 60)]
        print(f"| tiers of {f} | " + " | ".join(str(b) for b in bound) + " |")


if __name__ == "__main__":
    main()
