"""How a rule's examples and cases are run: through the engine that runs the rule in use.

Workload and object rules run through ``lint``; cluster rules (``applies="cluster"``) through
``pmanifest cluster check``'s engine on the text as a cluster request; whole-input rules
(``applies="input"``) through ``lint --cluster`` with the cluster request given beside them.
"""

from __future__ import annotations

from pmanifest.cluster_lint import cluster_findings
from pmanifest.cluster_request import parse_request
from pmanifest.document import Finding
from pmanifest.lint import LintOptions, lint_bytes
from pmanifest.rules import Rule


def findings_of(rule: Rule, text: str, file: str, options: LintOptions,
                cluster: str = "") -> list[Finding]:
    if rule.applies == "cluster":
        return cluster_findings(parse_request(text, file), options)
    if rule.applies == "input":
        assert cluster, f"{rule.meta.id} needs a cluster request to run against"
        options = options._replace(cluster=parse_request(cluster, "cluster.yaml"))
    return lint_bytes(text.encode("utf-8"), file, options)
