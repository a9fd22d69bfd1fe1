"""The tables the benchmark scripts keep in docs/performance.md.

Each script's table sits between `<!-- bench-NAME:begin ... -->` and
`<!-- bench-NAME:end -->` (the table text includes both lines); a new run
replaces it there, and a table not there yet is appended under `heading`.
"""
from pathlib import Path

PERFORMANCE = Path(__file__).resolve().parent.parent / "docs/performance.md"


def splice(name, table, heading=""):
    """Puts `table` (which begins with `<!-- bench-NAME:begin` and ends with
    `<!-- bench-NAME:end -->`) into docs/performance.md in place of the
    previous one, or appends it after `heading` (Markdown, may be empty)."""
    begin, end = "<!-- bench-%s:begin" % name, "<!-- bench-%s:end -->" % name
    text = PERFORMANCE.read_text() if PERFORMANCE.exists() else ""
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + table + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + heading + table + "\n"
    PERFORMANCE.write_text(text)
