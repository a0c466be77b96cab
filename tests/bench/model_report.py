"""The scale and cost model's report (`tests/bench/model.py` runs it): the Markdown tables,
findings and plots of the simulated day, from the scenarios model.py plays.
"""

import math
import os
import shlex
import sys
import time

from model import GB, K, MB, MIB, REQUESTS, TB, TUNED, k, tenant_shares


def hms(sec):
    if sec == math.inf:
        return "never"
    return f"{sec:,.0f} s" if sec < 600 else f"{sec / 3600:,.1f} h"


def fmt(x):
    return f"{x / 1e9:,.1f} B" if x >= 1e9 else f"{x / 1e6:,.1f} M" if x >= 1e6 else f"{x:,.0f}"


def per_tb(x, n=None):
    return (x["s"]["cost"][n] if n else sum(x["s"]["cost"].values())) / (x["s"]["avro"] / TB)


def what_ifs(tun):
    """The designs priced before they are built (model.WHAT_IF)."""
    if not tun.get("what_if"):
        return []
    (_, before), (_, ledger) = tun["what_if"]
    return [
        f"- **Late files** (docs/ARCHITECTURE.md, \"Late keys, once per partition\": a level-0 task leaves rows far "
        f"behind its snapshot to a file of their own, and one task a partition a tick probes them all against the "
        f"window) take the tuned column from ${before['total']:,.2f} per TB (`--set LATE_DEFERRED=0`: each task "
        f"probing its own late keys, S3 GETs ${before['S3 GET']:,.2f}) to the figure above. **One ledger write per "
        f"source** (docs/ARCHITECTURE.md: each source's pending mark, and one landed record a commit), writers' "
        f"lookups read eventually consistently and no log line per object take it from "
        f"**${ledger['total']:,.2f}** (`--set LEDGER_WRITES=2 WRITER_LOOKUP_RRU=1 LOG_BYTES_OBJECT=300`: two "
        f"writes per source, DynamoDB ${ledger['DynamoDB']:,.2f}, logs ${ledger['CloudWatch Logs']:,.2f}) to the "
        f"figure above.",
    ]


def keeps_up(x):
    """Whether every role keeps up at the target (each under 0.7 busy): writers against the event
    source's cap, the committer, and the compactors (every share of a tick runs, and ends within
    the tick)."""
    w, c, rw = x["mid"]["w"], x["mid"]["c"], x["mid"]["rw"]
    busy = {
        "writers": w["conc"] / k("WRITER_MAX_CONCURRENCY"),
        "committer": c["rho"],
        "compactor shares": rw["share_s"] / k("COMPACT_TICK_S") if rw["invocations"] >= rw["shares"] else math.inf,
    }
    return busy, all(v < 0.7 for v in busy.values())


def goals(dep):
    """The issue's goals for the default deployment, met or not."""
    busy, ok = keeps_up(dep)
    cost = per_tb(dep)
    roles = ", ".join(f"{n} {v:.2f}" if v != math.inf else f"{n}: not all run" for n, v in busy.items())
    return (f"- **Goals, as deployed** (`infra/` defaults, exact dedup): each role under 0.7 busy at 40,000 "
            f"files/min ({roles}): **{'met' if ok else 'not met'}**; **${cost:,.2f} per TB** of Avro, goal under "
            f"$7.5 (a tenth of Firehose's list price): **{'met' if cost < 7.5 else 'not met'}**.")


def findings(dep, tun):
    w, c, rw, tw, tc = dep["mid"]["w"], dep["mid"]["c"], dep["mid"]["rw"], tun["mid"]["w"], tun["mid"]["c"]
    fh = k("FIREHOSE_ICEBERG_PER_GB") * 1000
    round_mb = (w["mem"] - 100) / 3
    obj_mb = k("EVENTS_PER_FILE") * k("AVRO_B_PER_EVENT") / MB
    return [
        goals(dep),
        f"- **Writers.** Every 3,500-event file holds nearly all {k('TENANTS')} tenants, so a writer batch of "
        f"{w['b']:.0f} files (the deployed SQS batch size) writes {w['d']:.0f} Parquet files (objects fetched "
        f"{k('FETCHES_IN_FLIGHT')} ahead, files uploaded {k('UPLOADS_IN_FLIGHT')} at once): {w['wall']:.1f} s a batch, {w['conc']:,.0f} concurrent writers against the event source's cap of "
        f"{k('WRITER_MAX_CONCURRENCY')}, and {fmt(dep['s']['req']['S3 PUT data files (writers)'])} data-file PUTs a "
        f"day. A writer of {w['mem']:.0f} MB writes a batch in rounds of up to {round_mb:,.0f} MB of Avro "
        f"(`FLOE_WRITER_ROUND_BYTES`, a third of its memory past 100 MB): {round_mb / obj_mb:,.0f} of these "
        f"{obj_mb:.2f} MB objects, so {'one round a batch' if round_mb >= w['b'] * obj_mb else 'several rounds a batch'}. "
        f"The *tuned* column: batches of {tw['b']:.0f} files, {tw['conc']:,.0f} writers.",
        f"- **Committer.** Appends alone saturate one committer at **{dep['sat_append']:,.0f} files/min** as "
        f"deployed: each source costs one DynamoDB UpdateItem (its ledger mark; "
        f"{k('LEDGER_PARALLEL')} in flight at once) and each commit one more (its snapshot's landed record), "
        f"and the Lambda's 6 MB event caps a batch at {c['cap']} manifests of {w['msg'] / 1e3:.0f} KB. With the "
        f"work compaction gives it (a snapshot per {k('REWRITES_PER_SNAPSHOT'):.0f} rewrite requests, each "
        f"rewriting the manifests that hold its files, one PUT at a time) and the deletes of expired files ({k('DELETE_PARALLEL')} at a time, "
        f"~{w['d'] / w['b']:.1f} data files per Avro file), it saturates at **{dep['sat']:,.0f} files/min**; at the "
        f"target it would need {c['rho']:,.2f} times its time. The *tuned* column: {tc['rho']:.2f} busy at the "
        f"target, saturating at {tun['sat']:,.0f} files/min.",
        f"- **Compactors.** A tick plans ~{rw['tasks']:,.0f} tasks (the hot tenant's ~{rw['q0'] * tenant_shares()[0] / k('MAX_TASK_BYTES'):,.0f} of 512 MiB "
        f"alone). A tick cuts its plan into shares of {k('COMPACT_MAX_TASKS'):.0f} tasks, runs the first and sends "
        f"the others to the share queue, {k('COMPACT_MAX_INVOCATIONS'):.0f} shares a tick at most as deployed: "
        f"{rw['shares']:,.0f} are due, {rw['invocations']:,.0f} run, each for ~{rw['share_s']:,.0f} s "
        f"({'past' if rw['share_s'] > k('COMPACT_TIMEOUT_S') else 'within'} the {k('COMPACT_TIMEOUT_S'):.0f} s timeout). The *tuned* column cuts shares of {TUNED['COMPACT_MAX_TASKS']} tasks and allows "
        f"{TUNED['COMPACT_MAX_INVOCATIONS']}: {tun['mid']['rw']['invocations']:,.0f} invocations of "
        f"~{tun['mid']['rw']['share_s']:,.0f} s, {'inside' if tun['mid']['rw']['share_s'] < k('COMPACT_TICK_S') else 'longer than'} "
        f"the {k('COMPACT_TICK_S'):.0f} s tick, each planning again "
        "from the manifests that hold its partitions (compact/share.rs). Every L0 task of a partition checks its "
        "inputs' keys against the partition's compacted files through the key index (compact/prune.rs): "
        + ("with the dedup key `event_time, event_id` (or time-ordered ids), it reads only the files whose key bounds "
           "hold one of its keys and of them the 16 KiB key pages that may: the newest file for its on-time keys. "
           f"The {k('OFFLINE_FRAC'):.1%} of events up to {k('OFFLINE_MAX_S') / 3600:.0f} h late go to late files, "
           "whose rows one task a partition a tick probes against that window's files at once, reading their key "
           f"columns nearly whole (pages under {k('KEY_COALESCE_GAP') / 2**20:.0f} MiB apart share a GET; references "
           f"probed {k('REFERENCES_IN_FLIGHT'):.0f} at a time). So dedup stays exact and "
           f"reads {rw['refs'] / TB:,.2f} TB a noon tick however big the day partition grows, in "
           f"{fmt(tun['s']['req']['S3 GET compaction inputs + references'])} compaction GETs a day (tuned). "
           if k("KEY_CONFINED") else
           f"with random ids nothing is ruled out, and a noon tick reads {rw['refs'] / TB:,.1f} TB of key columns. ")
        + f"A task needs ~{rw['hot_mem'] / GB:,.1f} GB however big its partition. With random ids (UUIDv4; "
        "`--set KEY_CONFINED=0`) every compacted file's key column is read again at every tick, ever more "
        "through the day; a dedup window (table property `floe.dedup-window-ms`, opt-in: two copies of a key "
        "committed further apart both stay) bounds that instead.",
        f"- **Metadata.** The manifest sawtooth (the newest manifests wait in one bin until it holds {k('MERGE_PAST')} "
        "or outgrows the 8 MiB target, then merge) rides on the 8 MiB manifests that hold the "
        f"table's live files ({fmt(tun['rows'][-1]['live'])} with {k('HISTORY_DAYS'):.0f} days kept, "
        f"{tun['rows'][-1]['manifest_bytes'] / GB:,.1f} GB of manifests), which every compactor tick reads, "
        "one manifest parsed at a time, keeping about a kilobyte per live file (compact/mod.rs plan_table; "
        "`make bench-memory`); a warm committer keeps parsed only the manifests its next merge reads (at most the "
        "merge target's worth, merges bin-packed as Iceberg Java does), of the others a digest of 8 bytes per live "
        f"file, and parses one again when a rewrite removes a file from it (table/manifests.rs, merge.rs). With 1-hour expiry, a commit every {tc['interval']:.0f} s keeps "
        f"~{(tun['mid']['meta'] - k('META_BASE')) / (k('SNAP_BYTES') + 21 * min(tc['m'], 50)):,.0f} snapshots: "
        f"metadata.json is {tun['mid']['meta'] / MB:.1f} MB, written at every commit.",
        f"- **Cost.** The deployed pipeline costs **${per_tb(dep):,.2f} per TB** of Avro (compactors "
        f"${per_tb(dep, 'Lambda compactor'):,.2f}, DynamoDB ledger ${per_tb(dep, 'DynamoDB'):,.2f}, writers "
        f"${per_tb(dep, 'Lambda writer'):,.2f}), against Firehose's **${fh:,.0f} per TB** list price (a lower bound)"
        + ("; every role keeps up" if keeps_up(dep)[1] else
           ", but that figure describes no working system: some role falls behind (above)")
        + f". The tuned preset costs ${per_tb(tun):,.2f}. With exact dedup, the "
        "compactors read the late events' window once per partition a tick "
        f"({fmt(tun['s']['req']['S3 GET compaction inputs + references'])} compaction GETs a day): "
        f"`--set DEDUP_WINDOW_S=600` prices the 10-minute window instead.",
        *what_ifs(tun),
        "- **Read in the code, not in the figures.** The committer's reservation equals its event source's maximum "
        "concurrency, so no commit batch is throttled toward the dead-letter queue (infra/README.md).",
    ]


def report(scs, args, measured):
    dep, tun = scs
    s, tb = dep["s"], dep["s"]["avro"] / TB
    head = "| | " + " | ".join(x["name"] for x in scs) + " |\n|---|" + "---:|" * len(scs)
    out = [f"Generated by `tests/bench/model.py` on {time.strftime('%Y-%m-%d')}: a "
           f"{'diurnal' if args.diurnal else 'flat'} day of {k('FILES_PER_MIN'):,} files/min, "
           f"{fmt(s['events'])} events, {tb:,.1f} TB of Avro ({k('AVRO_B_PER_EVENT'):.0f} B/event), one table "
           f"partitioned by day and tenant ({k('TENANTS'):.0f} tenants, Zipf {k('ZIPF_S')}), in 1-minute steps; "
           f"measurements {'taken by this run' if measured else 'from the defaults (--quick)'}; the writer's rate "
           f"from {args.bench_source}. Produced by:", "", "    " + " ".join(shlex.quote(x) for x in [os.path.relpath(sys.executable)] + sys.argv), "",
           "`make bench-model` runs the same with `--bench-json target/bench/bench.json` (written by `make bench`).", "",
           "**As deployed** is `infra/` with its defaults and the code as it is. **Tuned** is what the model says it "
           "takes: " + ", ".join(f"`{n}` = {v:g}" for n, v in TUNED.items())
           + ". They are `infra/examples/quickstart/at-scale.tfvars` (`make deploy TF_VARS=-var-file=at-scale.tfvars`; "
           "the model reads them from there). Both columns dedup exactly (no window) on the key `event_time, "
           "event_id`, which the key index confines (`KEY_CONFINED` = 1).", ""] + findings(dep, tun) + ["", head.replace("| |", "| at noon |", 1)]

    def row(label, f):
        out.append(f"| {label} | " + " | ".join(f(x) for x in scs) + " |")

    m = lambda x, *key: x["mid"][key[0]][key[1]]  # noqa: E731
    row("writer batch: Avro files / Parquet files written", lambda x: f"{m(x, 'w', 'b'):.0f} / {m(x, 'w', 'd'):.0f}")
    row("writer memory, wall time per batch", lambda x: f"{m(x, 'w', 'mem')} MB, {m(x, 'w', 'wall'):.1f} s")
    row("**writer concurrency** (event source cap)", lambda x: f"**{m(x, 'w', 'conc'):,.0f}** ({k('WRITER_MAX_CONCURRENCY')})")
    row("manifest message, claim-checked", lambda x: f"{m(x, 'w', 'msg') / 1e3:,.0f} KB, {'yes' if m(x, 'w', 'claim') else 'no'}")
    row("manifests per commit (cap: batch size or 6 MB event)", lambda x: f"{m(x, 'c', 'm'):,.0f} ({m(x, 'c', 'cap')})")
    row("**files per commit**", lambda x: f"**{m(x, 'c', 'files'):,.0f}**")
    row("commit time, **commit interval**", lambda x: f"{m(x, 'c', 't'):.2f} s, **{m(x, 'c', 'interval'):.1f} s**")
    row("**committer busy fraction needed**: appends + rewrites + deletes", lambda x: f"{m(x, 'c', 'rho_append'):.2f} + "
        f"{x['mid']['rw_rho']:.2f} + {x['mid']['del_rho']:.2f} = **{m(x, 'c', 'rho'):,.2f}**")
    row("commit queue backlog growth (manifests/h)", lambda x: f"{m(x, 'c', 'backlog_h'):,.0f}")
    row("**one committer saturates at** (files/min): appends / all work",
        lambda x: " / ".join(f"**{v:,.0f}**" if v else "-" for v in (x["sat_append"], x["sat"])))
    row("compaction tasks per 5-minute tick", lambda x: f"{m(x, 'rw', 'tasks'):,.0f}")
    row("**compactor invocations per tick**: shares of `COMPACT_MAX_TASKS` tasks / allowed to run (`COMPACT_MAX_INVOCATIONS`)",
        lambda x: f"{m(x, 'rw', 'shares'):,.0f} / **{m(x, 'rw', 'invocations'):,.0f}**"
        f" ({m(x, 'rw', 'max_tasks'):.0f} tasks a share, {m(x, 'rw', 'max_inv'):.0f} allowed)")
    row("one share's invocation (timeout 900 s; past the 300 s tick the next tick plans it again)",
        lambda x: f"{m(x, 'rw', 'share_s'):,.0f} s")
    row(f"bytes compacted a day (write amplification; bench-table measured {k('BENCH_TABLE_WA'):.2f} on a small table)",
        lambda x: f"{m(x, 'rw', 'rewritten') * x['s']['avro'] * k('PARQUET_C_RATIO') / TB:,.1f} TB "
        f"({m(x, 'rw', 'rewritten') * k('PARQUET_C_RATIO') / k('PARQUET_L0_RATIO'):.2f}: L0 -> L1, and L1 -> L2 for level-1 files under half the target)")
    row("**compactor concurrency** (Lambda-seconds per tick / tick)", lambda x: f"**{m(x, 'rw', 'inv_s') / k('COMPACT_TICK_S'):,.0f}**")
    row("dedup references read per tick", lambda x: f"{m(x, 'rw', 'refs') / TB:,.1f} TB")
    row("hottest partition's task memory", lambda x: f"{m(x, 'rw', 'hot_mem') / GB:,.1f} GB")
    row("references outgrow the run's kept keys (then each task streams them): hottest / coldest partition",
        lambda x: f"{hms(x['og'][0])} / {hms(x['og'][1])}")
    row("manifests in the snapshot over the day (min-max)",
        lambda x: f"{min(r['manifests'] for r in x['rows']):,.0f}-{max(r['manifests'] for r in x['rows']):,.0f}")
    row("manifest bytes (end of day)", lambda x: f"{x['rows'][-1]['manifest_bytes'] / GB:,.1f} GB")
    row("metadata.json", lambda x: f"{x['mid']['meta'] / MB:.2f} MB")
    out += ["", "Requests per day:", "", head.replace("| |", "| requests per day |", 1)]
    for name in s["req"]:
        row(name, lambda x, n=name: fmt(x["s"]["req"].get(n, 0)))
    out += ["", "Cost at list prices, compute and requests (storage below):", "", head.replace("| |", "| $ per TB of Avro |", 1)]
    for name in s["cost"]:
        row(name, lambda x, n=name: f"{per_tb(x, n):,.2f}")
    row("**total per TB**", lambda x: f"**{per_tb(x):,.2f}**")
    row("total per day", lambda x: f"${sum(x['s']['cost'].values()):,.0f}")
    files_day = s["avro"] / k("AVRO_B_PER_EVENT") / k("EVENTS_PER_FILE")
    out += ["", f"**Amazon Data Firehose to Iceberg** on the same volume ({s['avro'] / GB:,.0f} GB/day): "
            f"${k('FIREHOSE_ICEBERG_PER_GB') * s['avro'] / GB:,.0f}/day, **${k('FIREHOSE_ICEBERG_PER_GB') * 1000:,.2f} "
            f"per TB** at `FIREHOSE_ICEBERG_PER_GB` = ${k('FIREHOSE_ICEBERG_PER_GB')}/GB (check the price page). A lower "
            "bound: Firehose ingests records (JSON rows), larger than the Avro bytes, and Direct PUT bills each record "
            "in 5 KB increments; its default Direct PUT limit for Iceberg is 5 MiB/s a stream (this is ~400 MB/s). It "
            f"also does away with the producers' landing PUTs (${files_day * k('S3_PUT') / tb:,.2f}/TB, not counted "
            "above).", "", f"Storage, apart: a day of compacted Parquet is {s['avro'] * k('PARQUET_C_RATIO') / TB:,.1f} "
            f"TB (${s['avro'] * k('PARQUET_C_RATIO') / GB * k('S3_GB_MONTH'):,.0f} a month per day kept); the ledger "
            f"grows {files_day * k('LEDGER_ITEM_BYTES') / GB:,.1f} GB a day (${files_day * k('LEDGER_ITEM_BYTES') / GB * k('DDB_GB_MONTH'):,.2f} "
            "a month per day kept, with PITR), kept `FLOE_LEDGER_TTL_DAYS` (52 days as deployed, 37 in the at-scale "
            "preset: infra/README.md, \"Storage that stops growing\").", "",
            "![Lambda concurrency per role over the day](img/model-concurrency.png)", "",
            "![Committer busy fraction needed against the ingest rate](img/model-committer.png)", "",
            "![Cost per TB by component, with Firehose](img/model-cost.png)", "",
            "AWS requests per unit of work, counted from the code (n objects in a writer batch, S sources in a commit):",
            "", "| per | request | count | where |", "|---|---|---|---|"]
    out += [f"| {a} | {b} | {c} | `{d}` |" for a, b, c, d in REQUESTS]
    out += ["", "The SQS event sources poll with AWS's pollers: at this load every ReceiveMessage returns 10 messages, "
            "so receives are counted as messages/10 (and a receive of a 162 KB manifest as its 64 KB chunks); idle long "
            "polls are left out. The catalog priced is DynamoDB (`catalog = \"dynamodb\"`, the default); with Glue the "
            "pointer is a GetTable and an UpdateTable per commit, in Glue's request pricing. The costs are of the work "
            "each scenario demands, whether or not its functions keep up. Not modelled: the daily orphan sweep, EMF "
            "custom-metric charges, cold starts, retries.", "",
            "Assumptions (`--set NAME=VALUE` overrides any; 'measured' ones come from this run):", "",
            "| name | value | source |", "|---|---|---|"]
    out += [f"| `{n}` | {v:.6g} | {src} |" for n, (v, src) in K.items()]
    return "\n".join(out)


def plots(scs, img):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    img.mkdir(parents=True, exist_ok=True)
    figs = {n: plt.subplots(figsize=(10 if n == "concurrency" else 8, 3.8)) for n in ("concurrency", "committer", "cost")}
    ax = figs["concurrency"][1]
    for x, style in zip(scs, ["-", "--"]):
        rows = [r for r in x["rows"] if r["rw"]]
        h = [r["t"] / 3600 for r in rows]
        for color, label, ys in [("C0", "writers", [r["w"]["conc"] for r in rows]),
                                 ("C1", "compactors", [r["rw"]["inv_s"] / k("COMPACT_TICK_S") for r in rows]),
                                 ("C2", "committer (busy, max 1)", [min(1, r["c"]["rho"]) for r in rows])]:
            ax.plot(h, ys, style, color=color, label=f"{label}, {x['name']}")
    ax.axhline(k("WRITER_MAX_CONCURRENCY"), color="grey", lw=0.8, ls=":", label="writer_max_concurrency")
    ax.set(yscale="log", xlim=(0, 24), ylabel="concurrent executions",
           xlabel="hour of the simulated day (UTC); late rows reach yesterday's partitions until 02:00")
    ax = figs["committer"][1]
    for i, x in enumerate(scs):
        fs = [f for f, *_ in x["curve"]]
        ax.plot(fs, [r for _, r, _ in x["curve"]], color=f"C{i}", label=f"{x['name']}: all its work")
        ax.plot(fs, [r for _, _, r in x["curve"]], ":", color=f"C{i}", label=f"{x['name']}: appends alone")
        for sat, dy in ((x["sat"], 8), (x["sat_append"], -14)):
            if sat:
                ax.plot([sat], [1], "o", color=f"C{i}")
                ax.annotate(f"{sat:,.0f}/min", (sat, 1), fontsize=7, xytext=(4, dy), textcoords="offset points")
    ax.axhline(1, color="black", lw=0.8)
    ax.axvline(k("FILES_PER_MIN"), color="red", lw=1, label=f"target {k('FILES_PER_MIN'):,}/min")
    ax.set(xscale="log", yscale="log", xlabel="ingest rate (Avro files per minute)",
           ylabel="committer busy fraction needed (noon)")
    ax = figs["cost"][1]
    names, width = list(scs[0]["s"]["cost"]) + ["total"], 0.4
    for i, x in enumerate(scs):
        vals = [per_tb(x, n) for n in names[:-1]] + [per_tb(x)]
        bars = ax.bar([j + i * width for j in range(len(names))], vals, width, label=x["name"])
        ax.bar_label(bars, labels=[f"{v:,.0f}" if v >= 10 else "" for v in vals], fontsize=6)
    fh = ax.bar(len(names) + 0.2, k("FIREHOSE_ICEBERG_PER_GB") * 1000, width, color="grey", label="Firehose list price")
    ax.bar_label(fh, fmt="%.0f", fontsize=6)
    ax.set_xticks([j + width / 2 for j in range(len(names) + 1)], names + ["Firehose\n(Iceberg)"], rotation=30,
                  ha="right", fontsize=7)
    ax.set(ylabel="$ per TB of Avro ingested", yscale="symlog", ylim=(0, max(per_tb(x) for x in scs) * 3))
    for name, (fig, ax) in figs.items():
        ax.legend(fontsize=7, **({"loc": "upper left", "bbox_to_anchor": (1.01, 1)} if name == "concurrency" else {}))
        fig.tight_layout()
        fig.savefig(img / f"model-{name}.png", dpi=90)
        plt.close(fig)
