"""How a rule's examples and cases are run: through the engine that runs the rule in use.

Workload and object rules run through ``lint``; cluster rules (``applies="cluster"``) through
``pmanifest cluster check``'s engine on the text as a cluster request; whole-input rules
(``applies="input"``) through ``lint --cluster`` with the cluster request given beside them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pmanifest.cluster.request import parse_request
from pmanifest.kube.document import Finding
from pmanifest.lint.cluster import cluster_findings
from pmanifest.lint.engine import LintOptions, lint_bytes
from pmanifest.rules import Rule


def findings_of(rule: Rule, text: str, file: str, options: LintOptions,
                cluster: str = "") -> list[Finding]:
    if rule.applies == "cluster":
        return cluster_findings(parse_request(text, file), options)
    if rule.applies == "input":
        assert cluster, f"{rule.meta.id} needs a cluster request to run against"
        options = options._replace(cluster=parse_request(cluster, "cluster.yaml"))
    return lint_bytes(text.encode("utf-8"), file, options)


if TYPE_CHECKING:
    from pmanifest.catalogue import RuleMeta


def catalogue_entries(text: str, source: str) -> list[RuleMeta]:
    """The entries of a catalogue file's text, read as the shipped files are."""
    from pmanifest import catalogue
    from pmanifest.schema.datafile import load_data

    items, _ = load_data(text, source, catalogue.FILE_SCHEMA, catalogue.CATALOGUE_WORDS,
                         error=catalogue.RegistryError)
    return catalogue.metas_of(items, source)
