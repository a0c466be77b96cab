"""Iceberg Java (Spark 3.5, Iceberg 1.10.2) as the other engine on a Floe warehouse, offline.

`make spark-venv` builds `.venv-spark`: PyPI `pyspark` (Scala 2.12) and the
iceberg-spark-runtime-3.5_2.12-1.10.2 jar that PyPI's `snowpark-connect-deps-iceberg` ships, the
test readers of requirements.txt, and the Jackson jars that runtime jar lacks, relocated here
(`python spark_engine.py --relocate-jackson DIR`, run once by make). The SQLite JDBC driver comes
from Debian (`libxerial-sqlite-jdbc-java`). The Spark tests run with that virtualenv's pytest.

`spark_session(wh)` starts one SparkSession (local[2], a small driver, no UI) whose catalog is
Iceberg's JdbcCatalog over the warehouse's `catalog.db`, named as Floe names it in the SQLite
rows; the tests' module-scoped fixtures start one per test module. Where Spark is missing the
tests are skipped with the reason, except under CI (`CI` set), where they fail.
"""

import glob
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPARK_VENV = Path(os.environ.get("SPARK_VENV", ROOT / ".venv-spark"))
JACKSON_DIR = SPARK_VENV / "jars"
RUNTIME_JAR = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
SQLITE_JAR = Path("/usr/share/java/sqlite-jdbc.jar")
JARJAR = Path("/usr/share/java/jarjar.jar")
JACKSON_RULE = "rule com.fasterxml.jackson.** org.apache.iceberg.shaded.com.fasterxml.jackson.@1\n"


def _runtime_jar():
    _import_spark()
    import snowpark_connect_deps_iceberg as deps
    return deps.get_jars_dir() / RUNTIME_JAR


def _sqlite_jni_dir():
    hits = sorted(glob.glob("/usr/lib/*/jni/libsqlitejdbc.so"))
    return str(Path(hits[0]).parent) if hits else None


def jars():
    return [str(_runtime_jar()), *sorted(map(str, JACKSON_DIR.glob("iceberg-shaded-jackson*.jar"))), str(SQLITE_JAR)]


# Diagnostics: FLOE_SPARK_KEEP_FILE_URIS=1 has Spark write `file:///abs` URIs (as Floe does)
# instead of Hadoop's `file:/abs`, through spark/KeepUriFileIO.java (compiled here on first use),
# to see what lies past a Floe that refuses `file:/`. Off by default: the tests are of Spark as
# it is.
KEEP_URIS = os.environ.get("FLOE_SPARK_KEEP_FILE_URIS") == "1"


def _keep_uri_jar():
    _import_spark()
    import pyspark
    src = Path(__file__).parent / "spark" / "KeepUriFileIO.java"
    out = JACKSON_DIR / "keep-uri-fileio.jar"
    if out.exists() and out.stat().st_mtime >= src.stat().st_mtime:
        return out
    cp = ":".join([str(_runtime_jar()), str(Path(pyspark.__file__).parent / "jars" / "*")])
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", tmp, str(src)], check=True)
        with zipfile.ZipFile(f"{out}.tmp", "w") as z:
            for f in Path(tmp).rglob("*.class"):
                z.write(f, f.relative_to(tmp))
    os.replace(f"{out}.tmp", out)
    return out


def _import_spark():
    """pyspark and the runtime jar's package, from this interpreter or else from .venv-spark
    (pure Python, so any interpreter of its Python version can import them)."""
    try:
        import pyspark  # noqa: F401
        import snowpark_connect_deps_iceberg  # noqa: F401
    except ImportError:
        v = f"python{sys.version_info.major}.{sys.version_info.minor}"
        site = SPARK_VENV / "lib" / v / "site-packages"
        if not (site / "pyspark").is_dir() or str(site) in sys.path:
            raise
        sys.path.append(str(site))
        import pyspark  # noqa: F401
        import snowpark_connect_deps_iceberg  # noqa: F401


def missing():
    """Why Spark cannot run here, or None."""
    fix = "run `make spark-venv`"
    try:
        _import_spark()
    except ImportError as e:
        return f"Spark tests need pyspark and the Iceberg runtime jar from {SPARK_VENV} (no {e.name} for " \
               f"{sys.executable}): {fix}"
    import pyspark
    if not pyspark.__version__.startswith("3.5."):
        return f"pyspark {pyspark.__version__} is not 3.5.x (the runtime jar is built for Spark 3.5, Scala 2.12)"
    if not _runtime_jar().exists():
        return f"{_runtime_jar()} is missing: {fix}"
    if not (JACKSON_DIR / ".relocated").exists():
        return f"the relocated Jackson jar is missing from {JACKSON_DIR}: {fix}"
    if not SQLITE_JAR.exists() or _sqlite_jni_dir() is None:
        return f"the SQLite JDBC driver is missing ({SQLITE_JAR}, Debian libxerial-sqlite-jdbc-java): {fix}"
    if shutil.which("java") is None:
        return "no java on the PATH (Java 17)"
    return None


def require_spark():
    """Skips the test where Spark's virtualenv was never made, outside CI; fails it where that
    virtualenv is there but unusable, or under CI (`CI` set), where a missing Spark is an error."""
    why = missing()
    if why is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and Spark cannot run: {why}", pytrace=False)
    if not SPARK_VENV.exists():
        pytest.skip(why)
    pytest.fail(f"{SPARK_VENV} is there but Spark cannot run: {why}", pytrace=False)


def catalog_name(wh: Path) -> str:
    """The catalog name Floe stores in the JDBC catalog's rows (JdbcCatalog selects by it)."""
    with sqlite3.connect(wh / "catalog.db") as db:
        names = {n for (n,) in db.execute("SELECT DISTINCT catalog_name FROM iceberg_tables")}
    assert len(names) == 1, f"one catalog name in {wh}/catalog.db, found {names}"
    return names.pop()


def spark_session(wh: Path, app="floe-tests"):
    """A SparkSession whose catalog (named as in catalog.db) is JdbcCatalog over `wh`."""
    require_spark()
    from pyspark.sql import SparkSession
    wh = Path(wh).resolve()
    name = catalog_name(wh)
    jni = _sqlite_jni_dir()
    c = f"spark.sql.catalog.{name}"
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"  # the driver listens on the loopback only
    extra_jars = [str(_keep_uri_jar())] if KEEP_URIS else []
    builder = (
        SparkSession.builder.master("local[2]").appName(app)
        .config("spark.jars", ",".join(jars() + extra_jars))
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", "1g")
        .config("spark.driver.extraJavaOptions", f"-Djava.library.path={jni} -XX:+UseSerialGC")
        .config("spark.driver.extraLibraryPath", jni)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config(c, "org.apache.iceberg.spark.SparkCatalog")
        .config(f"{c}.catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog")
        .config(f"{c}.uri", f"jdbc:sqlite:{wh}/catalog.db")
        .config(f"{c}.warehouse", f"file:{wh}")
        # Floe's catalog is the JDBC layout of schema v1; Spark must not create or migrate its
        # tables (a query JdbcCatalog's init leaves open would freeze its view of the WAL file),
        # and must see every commit Floe makes between two statements.
        .config(f"{c}.jdbc.schema-version", "V1")
        .config(f"{c}.jdbc.init-catalog-tables", "false")
        .config(f"{c}.cache-enabled", "false")
        .config("spark.sql.defaultCatalog", name)
    )
    if KEEP_URIS:
        builder = builder.config(f"{c}.io-impl", "floe.tests.KeepUriFileIO")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class Lake:
    """One Floe warehouse and the Spark session over it; tables are named per test."""

    def __init__(self, base: Path, spark):
        self.base, self.wh, self.spark = base, base / "wh", spark
        self.name = catalog_name(self.wh)

    def gen(self, name, seed, files=1, events=60, tenants=2, dup_rate=0):
        """Sample Avro files in base/name (`floe gen`: distinct event ids unless `dup_rate`)."""
        from test_pyiceberg import floe
        out = self.base / name
        floe("gen", "--out", out, "--files", files, "--events-per-file", events, "--seed", seed,
             "--dup-rate", dup_rate, "--tenants", tenants)
        return out

    def ingest(self, table, *paths_and_flags, expect=0):
        from test_pyiceberg import floe
        return floe("ingest", *paths_and_flags, "--warehouse", self.wh, "--table", table, expect=expect)

    def floe(self, command, table, *flags, expect=0):
        from test_pyiceberg import floe
        return floe(command, "--warehouse", self.wh, "--table", table, *flags, expect=expect)

    def compact(self, table, *flags):
        """`floe compact --full`: every task it planned committed, and nothing logged as an error
        (a rewrite the committer refuses also fails the command: `floe` exits 1)."""
        import re
        out = self.floe("compact", table, "--full", *flags)
        m = re.search(r"(\d+) task\(s\) of (\d+) planned", out.stdout)
        n = re.search(r"(\d+) rewrite\(s\) committed, (\d+) stale rejected", out.stdout)
        assert m and n, out.stdout
        assert int(m[1]) > 0 and n[1] == m[1] and n[2] == "0" and "ERROR" not in out.stderr, \
            f"floe compact --full of {table}: {m[1]} task(s) run, {n[1]} committed\n{out.stdout}\n{out.stderr}"
        return out

    def sql(self, query):
        return self.spark.sql(query).collect()

    def fq(self, table):
        return f"{self.name}.{table}"

    def spark_rows(self, table, ref=None, columns="*", where=None):
        """Every row Spark reads (at a snapshot id, tag or branch name), canonical and sorted."""
        q = f"SELECT {columns} FROM {self.fq(table)}"
        if ref is not None:
            q += f" VERSION AS OF {ref if isinstance(ref, int) else repr(ref)}"
        if where:
            q += f" WHERE {where}"
        return rows_of_arrow(self.spark.sql(q)._collect_as_arrow())

    def table(self, table):
        from test_pyiceberg import catalog
        return catalog(self.wh).load_table(table)

    def iceberg_rows(self, table, snapshot_id=None):
        """Every row PyIceberg reads, canonical and sorted."""
        return canon_rows(self.table(table).scan(snapshot_id=snapshot_id).to_arrow().to_pylist())

    def snapshot_id(self, table, ref="main"):
        return self.table(table).metadata.refs[ref].snapshot_id


def rows_of_arrow(batches):
    import pyarrow as pa
    return canon_rows(pa.Table.from_batches(batches).to_pylist() if batches else [])


def freeze(v):
    if isinstance(v, dict):
        return tuple(sorted((k, freeze(x)) for k, x in v.items()))
    if isinstance(v, list):
        return tuple(freeze(x) for x in v)
    return v


def canon(row: dict):
    """A row as a hashable value comparable across fastavro, PyIceberg and Spark: uuids as text
    (Spark reads them as strings), timestamps in UTC, maps as sorted pairs."""
    from test_pyiceberg import norm
    norm.uuid_bytes = True
    try:
        return freeze(norm(dict(row)))
    finally:
        norm.uuid_bytes = False


def canon_rows(rows):
    return sorted((canon(r) for r in rows), key=repr)


def avro_rows(paths, key="event_id"):
    """The source rows, read by fastavro: the first copy of each key."""
    from test_pyiceberg import read_avro
    first = {}
    for r in read_avro(paths):
        first.setdefault(str(r[key]), r)
    return list(first.values())


def expected(rows):
    """Rows (dicts, as fastavro gives them) in canonical sorted form."""
    return canon_rows(rows)


def assert_rows(got, want, what):
    """Exact equality of two canonical row lists, with a readable difference."""
    if got == want:
        return
    g, w = set(got), set(want)
    extra, lost = sorted(g - w, key=repr), sorted(w - g, key=repr)
    dups = len(got) - len(g)
    raise AssertionError(f"{what}: {len(got)} rows read, {len(want)} expected; {len(lost)} missing, {len(extra)} "
                         f"unexpected, {dups} duplicated\n  missing e.g. {lost[:2]}\n  unexpected e.g. {extra[:2]}")


SEED_TABLE = "seed.t"


# How the Spark tests' tables are made by `floe ingest`: partitioned by tenant, sorted by time,
# deduplicated by event id.
FLAGS = ["--partition-by", "identity(tenant_id)", "--sort-by", "event_time", "--dedup-key", "event_id"]


def lake_fixture(name: str):
    """A module-scoped `lake` fixture: one Spark session over a fresh warehouse per test module."""

    @pytest.fixture(scope="module")
    def lake(tmp_path_factory):
        lake = start_lake(tmp_path_factory.mktemp(name))
        yield lake
        lake.spark.stop()

    return lake


def start_lake(base: Path):
    """A Floe warehouse (its catalog.db made by one `floe ingest` of a seed table) and one Spark
    session over it."""
    from test_pyiceberg import floe
    require_spark()
    wh = base / "wh"
    floe("gen", "--out", base / "seed", "--files", 1, "--events-per-file", 10, "--seed", 1)
    floe("ingest", base / "seed", "--warehouse", wh, "--table", SEED_TABLE)
    return Lake(base, spark_session(wh))


def relocate_jackson(out: Path):
    """Iceberg's shaded Jackson (absent from the runtime jar): pyspark's Jackson 2.15 jars merged
    and relocated into org.apache.iceberg.shaded.com.fasterxml.jackson with jarjar. Multi-release
    class variants (META-INF/versions) are left out: jarjar would map them onto the base classes."""
    import pyspark
    src = Path(pyspark.__file__).parent / "jars"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        merged, rules = Path(tmp) / "jackson.jar", Path(tmp) / "rules.txt"
        rules.write_text(JACKSON_RULE)
        seen = set()
        with zipfile.ZipFile(merged, "w", zipfile.ZIP_DEFLATED) as z:
            for part in ("core", "databind", "annotations"):
                [jar] = src.glob(f"jackson-{part}-2.*.jar")
                with zipfile.ZipFile(jar) as j:
                    for e in j.infolist():
                        n = e.filename
                        if n.startswith("META-INF/") or n.endswith("module-info.class") or n in seen:
                            continue
                        seen.add(n)
                        z.writestr(e, j.read(e))
        dst = out / "iceberg-shaded-jackson.jar"
        subprocess.run(["java", "-jar", str(JARJAR), "process", str(rules), str(merged), f"{dst}.tmp"], check=True)
        with zipfile.ZipFile(f"{dst}.tmp") as z:
            names = set(z.namelist())
        want = "org/apache/iceberg/shaded/com/fasterxml/jackson/core/JsonFactoryBuilder.class"
        assert want in names, f"jarjar did not relocate Jackson ({want} missing)"
        os.replace(f"{dst}.tmp", dst)
    (out / ".relocated").touch()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--relocate-jackson":
        relocate_jackson(Path(sys.argv[2]))
    else:
        sys.exit(f"usage: {sys.argv[0]} --relocate-jackson DIR")
