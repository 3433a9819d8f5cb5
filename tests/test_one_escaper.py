"""One escaper (issue 24): every line pmanifest writes to stderr goes through
``pmanifest.io.writing.say`` (and so ``pmanifest.io.terminal.shown``). The syntax tree of
``src/`` is searched for any other way to write to stderr; the few that write no input are on
the allow-list with the reason."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pmanifest.io.terminal import json_text, shown, shown_lines

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "pmanifest"
pytestmark = pytest.mark.skipif(not PACKAGE.is_dir(), reason="needs the source tree")

ALLOWED: dict[tuple[str, str], str] = {
    ("lint/progress.py", "self.stream.write"): "the progress bar: counts, no input",
    ("generate.py", "print"): "the generator's usage line (a developer tool, no input)",
}


def _stderr_writes(tree: ast.AST) -> list[tuple[str, int]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = ast.unparse(func)
        keywords = {k.arg: ast.unparse(k.value) for k in node.keywords}
        echoed = name in ("click.echo", "click.secho", "echo") and keywords.get("err") == "True"
        printed = name == "print" and keywords.get("file") == "sys.stderr"
        written = name.startswith(("sys.stderr.", "self.stream.")) and \
            not name.endswith(".flush")
        if echoed or printed or written:
            found.append((name, node.lineno))
    return found


def test_nothing_writes_stderr_but_the_escaping_say() -> None:
    unexplained, seen = [], set()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module.startswith("io/"):
            continue
        for name, line in _stderr_writes(ast.parse(path.read_text(encoding="utf-8"))):
            seen.add((module, name))
            if (module, name) not in ALLOWED:
                unexplained.append(f"{module}:{line} {name}")
    assert not unexplained, f"stderr written without pmanifest.io.writing.say: {unexplained}"
    assert set(ALLOWED) <= seen, f"allowed writes that are gone: {set(ALLOWED) - seen}"


HOSTILE = "a\x1b[31mred\x1b[0m\rb\nc\td\x07e\x7ff\x9b2Jg\u2028h\u2029i\u202ej\u2066k\u200fl"


def test_shown_leaves_no_character_a_terminal_acts_on() -> None:
    out = shown(HOSTILE)
    assert out == ("a\\x1b[31mred\\x1b[0m\\rb\\nc\\td\\x07e\\x7ff\\x9b2Jg\\u2028h\\u2029i"
                   "\\u202ej\\u2066k\\u200fl")
    assert out.isprintable()
    assert shown("plain text, é, 日本, emoji \U0001f600") == "plain text, é, 日本, emoji \U0001f600"
    assert shown_lines("one\ntwo\x1b[2J\n") == "one\ntwo\\x1b[2J\n"


def test_json_text_keeps_the_value() -> None:
    import json

    text = json.dumps({"v": HOSTILE}, ensure_ascii=False)
    safe = json_text(text)
    assert json.loads(safe) == {"v": HOSTILE}
    assert all(ch.isprintable() or ch == "\n" for ch in safe)
