"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` a finding,
shown as annotations on the changed lines of a pull request.

``::error file=F,line=L,col=C,title=PM201 grace-period-over-limit::message``. Values go
through the one escaper (CR, LF, escape sequences from input become visible escapes: the log
shows them, never acts on them), then are escaped as the runner expects: ``%`` everywhere,
and ``:``/``,`` in properties.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from pmanifest.io.terminal import shown
from pmanifest.kube.document import Finding
from pmanifest.reporters import Summary
from pmanifest.reporters.sarif_format import artifact_uri

COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(value: str) -> str:
    """``value`` through the one escaper (the log shows no control character raw), then as
    the runner reads workflow commands."""
    return shown(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _file(name: str) -> str:
    # the same repository-relative path as SARIF, but a plain path, not a URI
    from urllib.parse import unquote

    return unquote(artifact_uri(name))


def render(findings: Iterable[Finding], summary: Summary, colour: bool) -> Iterator[str]:
    for f in findings:
        props = ",".join(
            f"{key}={escape_property(value)}"
            for key, value in (("file", _file(f.file)), ("line", str(f.line)),
                               ("col", str(f.column)), ("title", f"{f.rule} {f.slug}"))
        )
        yield f"::{COMMANDS[f.severity]} {props}::{escape_data(f.message)}\n"
