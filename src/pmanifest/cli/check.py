"""``pmanifest cluster check FILE...``: cluster rules on create/update requests, saved
``tg beta clusters`` command lines and cluster reads, in the usual reporters.

Each file holds one request (``--as`` says what it is when the guess, documented in
``cluster_request``, would be wrong). Findings point at the value of the field they are about,
in the body or in the command line. Reports are written as lint writes them: ``--format`` and
``--output`` pair up, files atomically, never over an input; exit 1 at or above
``--fail-on``, 2 for a file that cannot be read or parsed.
"""

from __future__ import annotations

from dataclasses import dataclass

from pmanifest.cli.outputs import Output, output_targets
from pmanifest.cluster.request import read_request
from pmanifest.errors import ConfigError
from pmanifest.io.writing import STDOUT, Target, input_identities, plan_outputs, write_targets
from pmanifest.kube.document import Finding, ObjectRef
from pmanifest.lint.cluster import cluster_findings
from pmanifest.lint.config import resolve_rule
from pmanifest.lint.engine import SEVERITY_RANK, LintOptions
from pmanifest.reporters import Summary
from pmanifest.reporters import text as report_text


@dataclass(frozen=True)
class CheckRequest:
    """A `pmanifest cluster check` run as the command line asked for it."""

    paths: tuple[str, ...]
    outputs: tuple[Output, ...]
    fail_on: str = "error"
    kind: str | None = None  # --as create|update|read (None: guessed per file)
    disable: tuple[str, ...] = ()
    colour: bool = False


def run_check(request: CheckRequest) -> tuple[str, list[str], int]:
    """(stdout, stderr lines, exit code); PmanifestError for exit-2 problems."""
    if request.paths.count("-") > 1:
        raise ConfigError("- (stdin) can be given only once")
    read = input_identities(request.paths)
    plan_outputs(output_targets(request.outputs), read)
    options = LintOptions(severities={resolve_rule(name): "off" for name in request.disable})
    findings: list[Finding] = []
    checked: list[tuple[str, str]] = []
    for path in request.paths:
        cluster = read_request(path, request.kind)
        findings.extend(cluster_findings(cluster, options))
        checked.append((cluster.file, ObjectRef("Cluster", cluster.name, None).label()))
    summary = Summary.of(findings, len(request.paths), len(request.paths), tuple(checked))
    stdout, reports = "", {}
    for output in request.outputs:
        text = report_text(output.format, findings, summary,
                           request.colour and output.path == STDOUT)
        if output.path == STDOUT:
            stdout = text
        else:
            reports[Target("--output", output.path)] = text
    write_targets(reports, read, "report")
    messages = []
    if findings and any(o.format == "text" for o in request.outputs):
        from pmanifest.reporters.text_format import summary_line

        messages.append(summary_line(summary).replace("object", "request"))
    threshold = SEVERITY_RANK[request.fail_on]
    failed = any(SEVERITY_RANK[f.severity] >= threshold for f in findings)
    return stdout, messages, 1 if failed else 0

