"""What a lint run passes over without linting it, and says so once after the summary (issue
22): files that are unrendered templates, wherever they sit. Exact exit code, stdout and stderr
of real runs through the command line, beside the positives that are still linted.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main

SELECT = ("--select", "PM002")
EMPTY_TAIL = ": nothing was checked; name the manifests to lint, or pass --allow-empty where " \
             "none is expected\n"
# operator-embedded Go templates and Helm templates outside any templates/ directory
GO_TEMPLATE = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: rules
  namespace: {{.Namespace}}
spec:
  groups: []
"""
HELM_PATCH = """\
{{- if .Values.remediation.enabled }}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "chart.fullname" . }}-sa
{{- end }}
"""
ASSUMED = "profile together, the default: no provider label found\n"  # (after the summary)
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n"
TEMPLATES = ("pmanifest: {} ({{{{ }}}} placeholders where the YAML breaks): their templated "
             "documents are not linted; lint the rendered output (helm template, envsubst, ...)\n")
TWO_TEMPLATES = TEMPLATES.format("2 unrendered template files")
ONE_TEMPLATE = TEMPLATES.format("1 unrendered template file")
PLACEHOLDERS = ("pmanifest: {} with unrendered placeholders (a value that is wholly ${{NAME}} "
                "or $NAME): such values are not type-checked; lint the rendered output for "
                "that\n")


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    return CliRunner()


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def run(runner: CliRunner, *args: str) -> tuple[int, str, str]:
    result = runner.invoke(main, ["lint", *SELECT, *args])
    return result.exit_code, result.stdout, result.stderr


def test_unrendered_templates_are_noted_once_not_pm001(runner: CliRunner,
                                                       tmp_path: Path) -> None:
    write(tmp_path / "resources" / "prometheusrules.tmpl.yaml", GO_TEMPLATE)
    write(tmp_path / "hack" / "template-patch" / "rbac.yaml", HELM_PATCH)
    write(tmp_path / "k8s" / "cm.yaml", CONFIG_MAP)
    assert run(runner, ".") == (0, "", (
        "0 errors, 0 warnings, 0 info in 3 files (1 object, 3 rules)\n" + ASSUMED + TWO_TEMPLATES))


def test_a_syntax_error_away_from_any_placeholder_is_still_pm001(runner: CliRunner,
                                                                 tmp_path: Path) -> None:
    write(tmp_path / "broken.yaml", 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n'
                                    'data: {a: "{{ .Values.a }}"}\n')
    write(tmp_path / "one.tmpl.yaml", GO_TEMPLATE)
    code, out, err = run(runner, ".")
    assert (code, out.split(" error ")[0]) == (1, "./broken.yaml:4:5:")
    assert err == (
        "1 error, 0 warnings, 0 info in 2 files (0 objects, 3 rules)\n" + ASSUMED
        + ONE_TEMPLATE)


def test_a_run_of_templates_only_checked_nothing_and_says_why(runner: CliRunner,
                                                              tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", GO_TEMPLATE)
    write(tmp_path / "b.yaml", HELM_PATCH)
    assert run(runner, "a.yaml", "b.yaml") == (2, "", (
        "pmanifest: no Kubernetes object found in a.yaml, b.yaml (2 files read, all unrendered "
        "templates: lint the rendered output)" + EMPTY_TAIL))
    assert run(runner, "a.yaml", "b.yaml", "--allow-empty") == (0, "", (
        "0 errors, 0 warnings, 0 info in 2 files (0 objects, 3 rules)\n" + ASSUMED
        + TWO_TEMPLATES))



BROKEN_CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\ndata: {a: b}\n"


def test_a_template_file_s_documents_without_a_placeholder_are_still_objects(
        runner: CliRunner, tmp_path: Path) -> None:
    """Once a document breaks at a {{ }} placeholder the file is a template: its documents
    with a {{ in their own text (parsed or not, before or after the break) and its other
    broken documents are passed over, and the plain ones are linted (kubernetes-engine-samples'
    vLLM Deployment before a Secret whose value is {{HF_TOKEN}})."""
    plain_wrong = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: plain}\nspec: {}\n"
    quoted = ('apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: "{{ .Values.n }}"}\n'
              "spec: {}\n")
    secret = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {t: {{HF_TOKEN}}}\n"
    write(tmp_path / "mixed.yaml", "---\n".join(
        [plain_wrong, quoted, BROKEN_CONFIG_MAP, secret, plain_wrong, quoted]))
    code, out, err = run(runner, "mixed.yaml")
    assert code == 1
    # the plain Deployments, both sides of the break, and nothing else (no PM001)
    assert sorted({line.split(" error ")[0] for line in out.splitlines()}) == [
        "mixed.yaml:24:1:", "mixed.yaml:4:1:"]
    assert err == ("4 errors, 0 warnings, 0 info in 1 file (2 objects, 3 rules)\n" + ASSUMED
                   + ONE_TEMPLATE)
    # positive: without the templated Secret nothing is a template; the quoted one is linted
    # too and the broken ConfigMap is PM001
    write(tmp_path / "mixed.yaml", "---\n".join([plain_wrong, quoted, BROKEN_CONFIG_MAP]))
    result = runner.invoke(main, ["lint", "--select", "PM002", "--select", "PM001",
                                  "mixed.yaml"])
    assert sorted({line.split(": ")[0] + " " + line.split(" ")[2] for line in
                   result.stdout.splitlines()}) == [
        "mixed.yaml:14:5 PM001[yaml-syntax-error]", "mixed.yaml:4:1 PM002[schema-invalid]",
        "mixed.yaml:9:1 PM002[schema-invalid]"]

# --- test assertions: chainsaw and kuttl ------------------------------------------------------

CHAINSAW_TEST = """\
apiVersion: chainsaw.kyverno.io/v1alpha1
kind: Test
metadata: {name: smoke}
spec:
  steps:
  - try:
    - apply: {file: 00-install.yaml}
    - assert: {file: 00-assert-*.yaml}
    catch:
    - error: {file: 00-gone.yaml}
"""
# an assertion tree: a JMESPath key, a status, no selector nor containers
ASSERT_DAEMONSET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: collector
  (contains(keys(annotations), 'user-annotation')): true
spec:
  template:
    metadata:
      annotations: {user-annotation: existing}
status:
  (desiredNumberScheduled == numberReady): true
"""
PLAIN_ASSERT = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\n"
                "spec: {replicas: 2}\nstatus: {readyReplicas: 2}\n")
# applied as is: no selector, so PM002 (the positive)
INSTALL = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: app}
spec:
  template:
    metadata: {labels: {app: a}}
    spec:
      containers: [{name: a, image: nginx}]
"""
ASSERTIONS = ("pmanifest: {} skipped: patterns a test harness (chainsaw, kuttl) matches "
              "against live objects, not objects to apply\n")
INSTALL_FINDING = ("e2e/smoke/00-install.yaml:4:1: error PM002[schema-invalid] spec is missing "
                   "'selector'; add it\n")


def test_chainsaw_assert_and_error_files_are_patterns_its_apply_file_is_linted(
        runner: CliRunner, tmp_path: Path) -> None:
    smoke = tmp_path / "e2e" / "smoke"
    write(smoke / "chainsaw-test.yaml", CHAINSAW_TEST)
    write(smoke / "00-install.yaml", INSTALL)
    write(smoke / "00-assert-daemonset.yaml", ASSERT_DAEMONSET)
    write(smoke / "00-assert-deployment.yaml", PLAIN_ASSERT)
    write(smoke / "00-gone.yaml", PLAIN_ASSERT)
    write(smoke / "01-assert.yaml", PLAIN_ASSERT)  # named by no step of the test: linted
    code, out, err = run(runner, "e2e")
    assert (code, out) == (1, INSTALL_FINDING + out.split(INSTALL_FINDING)[1])
    assert out.split(INSTALL_FINDING)[1].startswith("e2e/smoke/01-assert.yaml:4:1: error PM002")
    assert err.endswith(ASSERTIONS.format("3 test assertions"))


def test_kuttl_convention_under_a_test_suite(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "kuttl-test.yaml", "apiVersion: kuttl.dev/v1beta1\nkind: TestSuite\n"
                                        "testDirs: [./e2e]\n")
    write(tmp_path / "e2e" / "t" / "00-install.yaml", INSTALL)
    write(tmp_path / "e2e" / "t" / "00-assert.yaml", PLAIN_ASSERT)
    write(tmp_path / "e2e" / "t" / "01-errors.yaml", PLAIN_ASSERT)
    code, out, err = run(runner, "e2e")
    assert (code, out) == (1, INSTALL_FINDING.replace("e2e/smoke", "e2e/t"))
    assert err.endswith(ASSERTIONS.format("2 test assertions"))


def test_the_convention_alone_without_a_harness_is_linted(runner: CliRunner,
                                                          tmp_path: Path) -> None:
    write(tmp_path / "e2e" / "t" / "00-assert.yaml", PLAIN_ASSERT)
    code, out, err = run(runner, "e2e")
    assert (code, out.split(" error ")[0]) == (1, "e2e/t/00-assert.yaml:4:1:")
    assert "test assertion" not in err


def test_a_jmespath_key_makes_a_pattern_anywhere_a_kyverno_anchor_does_not(
        runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", ASSERT_DAEMONSET)
    write(tmp_path / "b.yaml", PLAIN_ASSERT.replace("metadata: {name: app}",
                                                    "metadata: {name: app, (name): app}"))
    code, out, err = run(runner, "a.yaml", "b.yaml")
    assert (code, out.split(" error ")[0]) == (1, "b.yaml:3:23:")
    assert err.endswith(ASSERTIONS.format("1 test assertion"))


# --- unrendered placeholders ----------------------------------------------------------------

ENVSUBST_SERVICE = """\
apiVersion: v1
kind: Service
metadata: {name: "${APP_NAME}"}
spec:
  ports:
  - name: http
    port: ${PORT_EXTERNAL}
    targetPort: http
"""


def test_a_file_with_placeholders_is_linted_and_said_once(runner: CliRunner,
                                                          tmp_path: Path) -> None:
    write(tmp_path / "template" / "030-service.yaml", ENVSUBST_SERVICE)
    write(tmp_path / "template" / "031-service.yaml", ENVSUBST_SERVICE.replace(
        "${PORT_EXTERNAL}", '"eighty"').replace("targetPort: http", "targetPort: ${PORT}"))
    write(tmp_path / "k8s" / "cm.yaml", CONFIG_MAP)
    code, out, err = run(runner, ".")
    assert (code, out.split(" error ")[0]) == (1, "./template/031-service.yaml:7:5:")
    assert out.count("\n") == 1
    assert err == ("1 error, 0 warnings, 0 info in 3 files (3 objects, 3 rules)\n" + ASSUMED
                   + PLACEHOLDERS.format("2 files"))


def test_a_placeholder_that_breaks_a_flow_collection_makes_a_template(
        runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "svc.yaml", ENVSUBST_SERVICE.replace(
        "  - name: http\n    port: ${PORT_EXTERNAL}\n    targetPort: http\n",
        "  - {name: http, port: ${PORT_EXTERNAL}, targetPort: http}\n"))
    write(tmp_path / "cm.yaml", CONFIG_MAP)
    assert run(runner, ".") == (0, "", "0 errors, 0 warnings, 0 info in 2 files (1 object, "
                                       "3 rules)\n" + ASSUMED + ONE_TEMPLATE)


CHANGE_TEST = """\
apiVersion: chainsaw.kyverno.io/v1alpha1
kind: Test
metadata: {name: change}
spec:
  steps:
  - try:
    - apply: {file: 00-install.yaml}
    - assert: {file: 00-assert.yaml}
  - try:
    - apply: {file: 01-annotate.yaml}
    - apply: {file: 01-again.yaml}
    - patch: {file: 01-patch.yaml}
"""
# the operator makes DaemonSet collector; the assertion finds it by its labels
OPERATOR_MADE = ("apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  labels: {app: collector}\n"
                 "status: {numberReady: 1}\n")
ANNOTATE = ("apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: collector\n"
            "  annotations: {manual: 'true'}\nspec:\n  template:\n    metadata:\n"
            "      annotations: {manual: 'true'}\n")


def test_a_chainsaw_apply_that_changes_what_an_operator_made_is_a_fragment(
        runner: CliRunner, tmp_path: Path) -> None:
    change = tmp_path / "e2e" / "change"
    write(change / "chainsaw-test.yaml", CHANGE_TEST)
    write(change / "00-install.yaml", INSTALL)  # makes Deployment app: linted (PM002)
    write(change / "00-assert.yaml", OPERATOR_MADE + "---\n" + PLAIN_ASSERT)
    write(change / "01-annotate.yaml", ANNOTATE)  # changes the operator's DaemonSet: a fragment
    write(change / "01-again.yaml", INSTALL)  # the test made app itself: linted again
    write(change / "01-patch.yaml", INSTALL)  # a patch operation: a fragment
    code, out, _ = run(runner, "e2e", "--select", "PM007")
    change = ("is a change e2e/change/chainsaw-test.yaml makes to an object that exists (a patch "
              "operation, or an object an assertion found and the test did not make): a "
              "fragment of an object, not linted on its own\n")
    assert (code, out) == (1, (
        "e2e/change/00-install.yaml:4:1: error PM002[schema-invalid] spec is missing "
        "'selector'; add it\n"
        "e2e/change/01-again.yaml:4:1: error PM002[schema-invalid] spec is missing "
        "'selector'; add it\n"
        "e2e/change/01-annotate.yaml:1:1: info PM007[patch-fragment-skipped] DaemonSet "
        "'collector' " + change +
        "e2e/change/01-patch.yaml:1:1: info PM007[patch-fragment-skipped] Deployment 'app' "
        + change))
