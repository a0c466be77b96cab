"""Replacing a generated block of a Markdown file: the text between `<!-- NAME:begin -->` and
`<!-- NAME:end -->`, so that the benchmark scripts can write their figures into
docs/PERFORMANCE.md without touching the prose around them."""

from pathlib import Path


def replace_block(path: Path, name: str, text: str) -> None:
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    doc = path.read_text()
    if begin not in doc or end not in doc:
        raise SystemExit(f"{path} has no {begin} ... {end} block")
    head, rest = doc.split(begin, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{begin}\n{text.rstrip()}\n{end}{tail}")
