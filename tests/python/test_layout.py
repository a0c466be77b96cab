"""The engine's rooms and which may use which (docs/ARCHITECTURE.md, "Ports and adapters"),
checked on the source: a rule nobody checks erodes one convenient import at a time.

- `shared/src/adapters/` implements ports: it never imports the roles (`crate::pipeline`) or
  the Lambda application layer that composes them (`crate::handlers`).
- `Error::Config` means "the user's settings are wrong": it is built only where settings are
  read and checked (shared/src/error.rs lists who acts on each variant).
"""

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "shared" / "src"


def imports(room, *modules):
    pattern = re.compile(r"\b(?:crate|floe)::(" + "|".join(modules) + r")\b")
    return [f"{p.relative_to(SRC)}:{n}: {line.strip()}"
            for p in sorted((SRC / room).rglob("*.rs"))
            for n, line in enumerate(p.read_text().splitlines(), 1)
            if pattern.search(line) and not line.lstrip().startswith("//")]


def test_adapters_import_neither_the_roles_nor_the_handlers():
    assert (SRC / "adapters").is_dir() and (SRC / "handlers").is_dir()
    assert imports("adapters", "pipeline", "handlers") == []


def test_the_check_sees_an_import():
    assert imports("handlers", "pipeline"), "the handlers compose the roles: the pattern must find that"


# Where the user's settings are read and checked: floe.toml and its routing, `FLOE_*` variables
# (the engine's, the compactor's, the AWS and REST adapters'), a table name, a table's partition
# and sort terms or properties checked against its schema, and flags checked against a table.
SETTINGS = {
    "settings.rs", "config/mod.rs", "config/routing.rs", "route.rs", "error.rs", "ports/table_pointer.rs",
    "table/create.rs", "table/mod.rs", "table/terms.rs",
    "pipeline/create.rs", "handlers/mod.rs", "handlers/compactor.rs", "handlers/committer.rs", "adapters/aws/mod.rs",
    "adapters/rest/mod.rs", "adapters/aws/secrets.rs", "sample/mod.rs",
}


def test_config_errors_are_built_only_where_settings_are_read():
    built = {str(p.relative_to(SRC)) for p in SRC.rglob("*.rs") if "Error::Config(" in p.read_text()}
    assert built, "the pattern must find the settings parsers"
    assert built - SETTINGS == set(), "a message, a data file or a bug is not the user's settings"


def test_the_library_reads_no_environment_but_through_settings():
    read = re.compile(r"\bstd::env::(var|var_os|vars)\b")
    sites = [f"{p.relative_to(SRC)}:{n}" for p in SRC.rglob("*.rs")
             for n, line in enumerate(p.read_text().splitlines(), 1) if read.search(line)]
    assert sites and all(s.startswith("settings.rs:") for s in sites), sites


def test_the_table_and_convert_rooms_take_typed_values_not_settings():
    assert imports("table", "config", "route") == []
    assert imports("convert", "config", "route") == []
    assert imports("pipeline", "config"), "the pattern must find an import of the settings"


def uses(path, module):
    pattern = re.compile(r"\b(?:super|crate)(?:::[a-z_]+)*?::" + module + r"\b")
    return [line for line in (SRC / path).read_text().splitlines()
            if pattern.search(line) and not line.lstrip().startswith("//")]


def test_no_two_files_import_each_other():
    # The pairs that once did: each now leans one way only.
    assert uses("config/mod.rs", "route") == [] and uses("config/routing.rs", "route") == []
    assert uses("route.rs", "config"), "routing reads the settings"
    assert uses("adapters/rest/auth.rs", "http") == [] and uses("adapters/rest/http.rs", "auth")
    assert uses("table/merge.rs", "snapshot") == [] and uses("table/snapshot.rs", "merge")
