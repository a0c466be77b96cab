"""The engine's rooms and which may use which (docs/ARCHITECTURE.md, "Ports and adapters"),
checked on the source: a rule nobody checks erodes one convenient import at a time.

- `shared/src/adapters/` implements ports: it never imports the roles (`crate::pipeline`) or
  the Lambda application layer that composes them (`crate::handlers`).
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
