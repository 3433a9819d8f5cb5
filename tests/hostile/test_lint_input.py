"""Every hostile input of the corpus through the real CLI: exact exit code, findings and summary.

Each case runs ``pmanifest lint FILE`` in-process (click's CliRunner); ``conftest.invoke`` also
checks that nothing crashed (no exception but SystemExit, no exit 3, no "Traceback") and that
the run was bounded in time. A few cases run again in a real ``python -m pmanifest`` process.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.lint.engine import ALWAYS
from tests.hostile.conftest import RULES, invoke, run_real
from tests.hostile.corpus import SMALL

MESSAGES = {
    'DEEP': 'document is nested more than 200 levels deep',
    'MERGE': 'a merge key (<<) needs a mapping or a list of mappings',
    'GRACE_900': (
        'terminationGracePeriodSeconds is 900, above the 300 s cap of preemptible nodes '
        '(together profile): the node is removed 300 s after the notice whatever the pod '
        'is doing; set it to 300 or less and finish the checkpoint inside that window'
    ),
    'POD_NO_HANDLER': (
        'Pod runs on preemptible nodes but no container traps SIGTERM or has a preStop '
        'hook: a preemption loses the work since the last checkpoint (ignore this if the '
        'program itself checkpoints on SIGTERM)'
    ),
    'GRACE_FLOAT': (
        'terminationGracePeriodSeconds is 1000000000.0, above the 300 s cap of '
        'preemptible nodes (together profile): the node is removed 300 s after the notice'
        ' whatever the pod is doing; set it to 300 or less and finish the checkpoint '
        'inside that window'
    ),
    'GRACE_HUGE': (
        'terminationGracePeriodSeconds is 9999999999999999999999999999999999999999, above'
        ' the 300 s cap of preemptible nodes (together profile): the node is removed 300 '
        's after the notice whatever the pod is doing; set it to 300 or less and finish '
        'the checkpoint inside that window'
    ),
    'JOB_NO_HANDLER': (
        'Job runs on preemptible nodes but no container traps SIGTERM or has a preStop '
        'hook: a preemption loses the work since the last checkpoint (ignore this if the '
        'program itself checkpoints on SIGTERM)'
    ),
    'EMPTY_TERM': (
        'no node can run this pod: an empty nodeSelectorTerm matches no node'
    ),
    'PFP_NO_IGNORE': (
        'Job can run on preemptible nodes but no rule with action Ignore on '
        'onPodConditions type DisruptionTarget: every preemption consumes backoffLimit '
        'and can fail the Job; add a podFailurePolicy rule `action: Ignore` with '
        '`onPodConditions: [{type: DisruptionTarget}]` (its pods request no accelerator, so '
        "this is reported one severity level below the rule's)"
    ),
    'PY_APPLY': (
        "unsupported YAML tag 'tag:yaml.org,2002:python/object/apply:os.system'"
    ),
    'PY_NEW': (
        "unsupported YAML tag 'tag:yaml.org,2002:python/object/new:os.system'"
    ),
    'PY_NAME': (
        "unsupported YAML tag 'tag:yaml.org,2002:python/name:os.system'"
    ),
    'PY_SUBPROCESS': (
        'unsupported YAML tag '
        "'tag:yaml.org,2002:python/object/apply:subprocess.check_output'"
    ),
}
EXPECTED: dict[str, tuple[int, list[tuple[str, str, str]], str]] = {
    'empty': (2, [
    ], (
        'pmanifest: no Kubernetes object found in empty.yaml (1 file read, no object with '
        'apiVersion and kind in it): nothing was checked; name the manifests to lint, or '
        'pass --allow-empty where none is expected')),
    'comment-only': (2, [
    ], (
        'pmanifest: no Kubernetes object found in comment-only.yaml (1 file read, no object '
        'with apiVersion and kind in it): nothing was checked; name the manifests to lint, '
        'or pass --allow-empty where none is expected')),
    'only-marker': (2, [
    ], (
        'pmanifest: no Kubernetes object found in only-marker.yaml (1 file read, no object '
        'with apiVersion and kind in it): nothing was checked; name the manifests to lint, '
        'or pass --allow-empty where none is expected')),
    'markers-and-comments': (2, [
    ], (
        'pmanifest: no Kubernetes object found in markers-and-comments.yaml (1 file read, no '
        'object with apiVersion and kind in it): nothing was checked; name the manifests to '
        'lint, or pass --allow-empty where none is expected')),
    'binary-png': (1, [
        ('1:1:', 'error PM001[yaml-syntax-error]', 'file is not valid UTF-8 text'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'invalid-utf8': (1, [
        ('3:21:', 'error PM001[yaml-syntax-error]', 'file is not valid UTF-8 text'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'utf16-surrogate': (1, [
        ('1:4:', 'error PM001[yaml-syntax-error]', 'file is not valid UTF-8 text'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'nul-byte': (1, [
        ('3:1:', 'error PM001[yaml-syntax-error]', 'file contains NUL bytes (binary data?)'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'bom': (1, [
        ('5:3:', 'error PM201[grace-period-over-limit]', 'GRACE_900'),
        ('7:17:', 'warning PM302[no-checkpoint-handler]', 'POD_NO_HANDLER'),
    ], '1 error, 1 warning, 0 info in 1 file (1 object)'),
    'crlf': (1, [
        ('5:3:', 'error PM201[grace-period-over-limit]', 'GRACE_900'),
        ('7:17:', 'warning PM302[no-checkpoint-handler]', 'POD_NO_HANDLER'),
    ], '1 error, 1 warning, 0 info in 1 file (1 object)'),
    'bom-crlf-syntax-error': (1, [
        ('4:1:', 'error PM001[yaml-syntax-error]', 'did not find expected node content'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'syntax-error-no-object-keys': (2, [
    ], (
        'pmanifest: no Kubernetes object found in syntax-error-no-object-keys.yaml (1 file read, '
        'no object with apiVersion and kind in it): nothing was checked; name the manifests to '
        'lint, or pass --allow-empty where none is expected')),
    'bare-scalar': (2, [
    ], (
        'pmanifest: no Kubernetes object found in bare-scalar.yaml (1 file read, no object '
        'with apiVersion and kind in it): nothing was checked; name the manifests to lint, '
        'or pass --allow-empty where none is expected')),
    'top-level-list': (2, [
    ], (
        'pmanifest: no Kubernetes object found in top-level-list.yaml (1 file read, no '
        'object with apiVersion and kind in it): nothing was checked; name the manifests to '
        'lint, or pass --allow-empty where none is expected')),
    'tab-indent': (1, [
        ('4:1:', 'error PM001[yaml-syntax-error]', 'found character that cannot start any token'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'kind-missing': (2, [
    ], (
        'pmanifest: no Kubernetes object found in kind-missing.yaml (1 file read, no object '
        'with apiVersion and kind in it): nothing was checked; name the manifests to lint, '
        'or pass --allow-empty where none is expected')),
    'kind-int': (2, [
    ], (
        'pmanifest: no Kubernetes object found in kind-int.yaml (1 file read, no object with '
        'apiVersion and kind in it): nothing was checked; name the manifests to lint, or '
        'pass --allow-empty where none is expected')),
    'kind-list': (2, [
    ], (
        'pmanifest: no Kubernetes object found in kind-list.yaml (1 file read, no object '
        'with apiVersion and kind in it): nothing was checked; name the manifests to lint, '
        'or pass --allow-empty where none is expected')),
    'kind-null': (2, [
    ], (
        'pmanifest: no Kubernetes object found in kind-null.yaml (1 file read, no object '
        'with apiVersion and kind in it): nothing was checked; name the manifests to lint, '
        'or pass --allow-empty where none is expected')),
    'apiversion-int': (2, [
    ], (
        'pmanifest: no Kubernetes object found in apiversion-int.yaml (1 file read, no '
        'object with apiVersion and kind in it): nothing was checked; name the manifests to '
        'lint, or pass --allow-empty where none is expected')),
    'grace-string': (1, [
        ('11:7:', 'error PM002[schema-invalid]',
         'spec.template.spec.terminationGracePeriodSeconds must be an integer, got string; give '
         'an integer'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'grace-1e9': (1, [  # a number, as kubectl reads it (YAML 1.1 made it a string)
        ('11:7:', 'error PM201[grace-period-over-limit]', 'GRACE_FLOAT'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'grace-float': (1, [
        ('11:7:', 'error PM201[grace-period-over-limit]', 'GRACE_FLOAT'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'grace-huge-int': (1, [
        ('11:7:', 'error PM002[schema-invalid]',
         'spec.template.spec.terminationGracePeriodSeconds is '
         '9999999999999999999999999999999999999999, which does not fit in int64 '
         '(-9223372036854775808 to 9223372036854775807); use a smaller value'),
        ('11:7:', 'error PM201[grace-period-over-limit]', 'GRACE_HUGE'),
    ], '2 errors, 0 warnings, 0 info in 1 file (1 object)'),
    'grace-list': (1, [
        ('11:7:', 'error PM002[schema-invalid]',
         'spec.template.spec.terminationGracePeriodSeconds must be an integer, got list; give an '
         'integer'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'grace-nan': (1, [
        ('11:7:', 'error PM002[schema-invalid]',
         'spec.template.spec.terminationGracePeriodSeconds must be an integer, got number; give '
         'an integer'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'template-null': (0, [
    ], '0 errors, 0 warnings, 0 info in 1 file (1 object)'),
    'spec-list': (1, [
        ('4:1:', 'error PM002[schema-invalid]',
         'spec must be a mapping, got list; give a mapping'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'pod-spec-scalar': (1, [
        ('6:5:', 'error PM002[schema-invalid]',
         'spec.template.spec must be a mapping, got string; give a mapping'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'metadata-list': (1, [
        ('3:1:', 'error PM002[schema-invalid]',
         'metadata must be a mapping, got list; give a mapping'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'containers-map': (1, [
        ('12:7:', 'error PM002[schema-invalid]',
         'spec.template.spec.containers must be a list, got mapping; give a list'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'containers-scalars': (1, [
        ('12:20:', 'error PM002[schema-invalid]',
         'spec.template.spec.containers[0] must be a mapping, got string; give a mapping'),
        ('12:26:', 'error PM002[schema-invalid]',
         'spec.template.spec.containers[1] must be a mapping, got integer; give a mapping'),
    ], '2 errors, 0 warnings, 0 info in 1 file (1 object)'),
    'command-string': (1, [
        ('13:11:', 'warning PM302[no-checkpoint-handler]', 'JOB_NO_HANDLER'),
        ('15:11:', 'error PM002[schema-invalid]',
         'spec.template.spec.containers[0].command must be a list, got string; give a list'),
    ], '1 error, 1 warning, 0 info in 1 file (1 object)'),
    'env-map': (1, [
        ('16:11:', 'error PM002[schema-invalid]',
         'spec.template.spec.containers[0].env must be a list, got mapping; give a list'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'env-item-junk': (1, [
        ('16:17:', 'error PM002[schema-invalid]',
         'spec.template.spec.containers[0].env[0] must be a mapping, got integer; give a mapping'),
        ('16:21:', 'error PM002[schema-invalid]',
         'spec.template.spec.containers[0].env[1].name must be a string, got list; quote it to '
         'make it a string'),
        ('16:33:', 'error PM002[schema-invalid]',
         "spec.template.spec.containers[0].env[2] is missing 'name'; add it"),
        ('16:34:', 'error PM002[schema-invalid]',
         'spec.template.spec.containers[0].env[2].value must be a string, got integer; quote it '
         'to make it a string'),
    ], '4 errors, 0 warnings, 0 info in 1 file (1 object)'),
    'nodeselector-list': (1, [
        ('10:7:', 'error PM002[schema-invalid]',
         'spec.template.spec.nodeSelector must be a mapping, got list; give a mapping'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'affinity-terms-strings': (1, [
        ('10:102:', 'error PM002[schema-invalid]',
         ''
         'spec.template.spec.affinity.nodeAffinity.'
         'requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0] must be a mapping, '
         'got string; give a mapping'),
        ('10:105:', 'error PM002[schema-invalid]',
         ''
         'spec.template.spec.affinity.nodeAffinity.'
         'requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[1] must be a mapping, '
         'got string; give a mapping'),
    ], '2 errors, 0 warnings, 0 info in 1 file (1 object)'),
    'affinity-expressions-strings': (1, [
        ('10:102:', 'error PM104[unschedulable-placement]', 'EMPTY_TERM'),
        ('10:122:', 'error PM002[schema-invalid]',
         ''
         'spec.template.spec.affinity.nodeAffinity.'
         'requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].'
         'matchExpressions[0] must be a mapping, got string; give a mapping'),
    ], '2 errors, 0 warnings, 0 info in 1 file (1 object)'),
    'prestop-string': (1, [
        ('16:23:', 'error PM002[schema-invalid]',
         'spec.template.spec.containers[0].lifecycle.preStop must be a mapping, got string; give '
         'a mapping'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'prestop-exec-string': (1, [
        ('16:40:', 'error PM002[schema-invalid]',
         'spec.template.spec.containers[0].lifecycle.preStop.exec.command must be a list, got '
         'string; give a list'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'volumes-no-name': (1, [
        ('12:17:', 'error PM002[schema-invalid]',
         "spec.template.spec.volumes[0] is missing 'name'; add it"),
        ('12:33:', 'error PM002[schema-invalid]',
         'spec.template.spec.volumes[1] must be a mapping, got integer; give a mapping'),
    ], '2 errors, 0 warnings, 0 info in 1 file (1 object)'),
    'volume-mounts-string': (1, [
        ('16:11:', 'error PM002[schema-invalid]',
         'spec.template.spec.containers[0].volumeMounts must be a list, got string; give a list'),
    ], '1 error, 0 warnings, 0 info in 1 file (1 object)'),
    'pod-failure-policy-string': (1, [
        ('5:3:', 'error PM002[schema-invalid]',
         'spec.podFailurePolicy must be a mapping, got string; give a mapping'),
        ('5:3:', 'info PM401[preemption-counts-as-failure]', 'PFP_NO_IGNORE'),
    ], '1 error, 0 warnings, 1 info in 1 file (1 object)'),
    'list-items-junk': (2, [
    ], (
        'pmanifest: no Kubernetes object found in list-items-junk.yaml (1 file read, no '
        'object with apiVersion and kind in it): nothing was checked; name the manifests to '
        'lint, or pass --allow-empty where none is expected')),
    'list-items-map': (0, [
    ], '0 errors, 0 warnings, 0 info in 1 file (1 object)'),
    'non-string-keys': (1, [
        ('4:8:', 'error PM002[schema-invalid]',
         "unknown key '1' in spec; remove it"),
        ('4:14:', 'error PM002[schema-invalid]',
         "unknown key 'true' in spec; remove it"),
        ('4:23:', 'error PM002[schema-invalid]',
         "unknown key 'null' in spec; remove it"),
    ], '3 errors, 0 warnings, 0 info in 1 file (1 object)'),
    'duplicate-key': (1, [
        ('3:1:', 'error PM001[yaml-syntax-error]', "duplicate key 'kind'"),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'duplicate-nested-key': (1, [
        ('5:24:', 'error PM001[yaml-syntax-error]', "duplicate key 'x'"),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'deep-flow': (1, [
        ('1:203:', 'error PM001[yaml-syntax-error]', 'DEEP'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'deep-flow-maps': (1, [
        ('1:800:', 'error PM001[yaml-syntax-error]', 'DEEP'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'deep-block': (1, [
        ('201:401:', 'error PM001[yaml-syntax-error]', 'DEEP'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'billion-laughs': (1, [
        ('6:10:', 'error PM001[yaml-syntax-error]', 'too many alias expansions (a YAML bomb?)'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'alias-fanout': (1, [
        ('25002:9:', 'error PM001[yaml-syntax-error]', 'too many alias expansions (a YAML bomb?)'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'recursive-alias': (1, [
        ('2:6:', 'error PM001[yaml-syntax-error]', 'unknown or recursive alias *a'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'recursive-alias-flow': (1, [
        ('1:5:', 'error PM001[yaml-syntax-error]', 'unknown or recursive alias *a'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'unknown-alias': (1, [
        ('1:4:', 'error PM001[yaml-syntax-error]', 'unknown or recursive alias *nowhere'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    # an unrendered template is passed over (issue 22): a run of nothing else checked nothing
    'helm-value': (2, [], 'TEMPLATE_ONLY helm-value'),
    'helm-quoted-value-int-field': (2, [], 'TEMPLATE_ONLY helm-quoted-value-int-field'),
    'helm-key': (2, [], 'TEMPLATE_ONLY helm-key'),
    'helm-whole-line': (2, [], 'TEMPLATE_ONLY helm-whole-line'),
    'helm-include': (2, [], 'TEMPLATE_ONLY helm-include'),
    'python-apply': (1, [
        ('3:4:', 'error PM001[yaml-syntax-error]', 'PY_APPLY'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'python-new': (1, [
        ('3:7:', 'error PM001[yaml-syntax-error]', 'PY_NEW'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'python-name': (1, [
        ('3:4:', 'error PM001[yaml-syntax-error]', 'PY_NAME'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'python-subprocess': (1, [
        ('4:3:', 'error PM001[yaml-syntax-error]', 'PY_SUBPROCESS'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'python-outside-objects': (2, [], (  # another tool's YAML: skipped, never constructed
        'pmanifest: no Kubernetes object found in python-outside-objects.yaml (1 file read, '
        'no object with apiVersion and kind in it): nothing was checked; name the manifests '
        'to lint, or pass --allow-empty where none is expected')),
    'custom-tag-ref': (1, [
        ('4:9:', 'error PM001[yaml-syntax-error]', "unsupported YAML tag '!Ref'"),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'set-tag': (1, [
        ('3:4:', 'error PM001[yaml-syntax-error]', "unsupported YAML tag 'tag:yaml.org,2002:set'"),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'bad-int-tag': (1, [
        ('1:4:', 'error PM001[yaml-syntax-error]', 'invalid value for tag:yaml.org,2002:int'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'merge-key': (1, [
        ('5:8:', 'error PM201[grace-period-over-limit]', 'GRACE_900'),
        ('5:114:', 'warning PM302[no-checkpoint-handler]', 'POD_NO_HANDLER'),
    ], '1 error, 1 warning, 0 info in 1 file (1 object)'),
    'merge-key-scalar': (1, [
        ('2:7:', 'error PM001[yaml-syntax-error]', 'MERGE'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'complex-key': (1, [
        ('1:10:', 'error PM001[yaml-syntax-error]', 'mapping keys must be scalars'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'yaml-directive-1.3': (1, [
        ('1:1:', 'error PM001[yaml-syntax-error]', 'found incompatible YAML document'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'tag-directive-python': (1, [
        ('5:4:', 'error PM001[yaml-syntax-error]', 'PY_APPLY'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'unicode-line-separators': (1, [  # U+0085/2028/2029 inside: positions are file lines
        ('4:1:', 'error PM002[schema-invalid]',
         "spec is missing 'containers'; add it"),
        ('4:8:', 'error PM201[grace-period-over-limit]', 'GRACE_900'),
    ], '2 errors, 0 warnings, 0 info in 1 file (1 object)'),
    'long-line-then-error': (1, [
        ('4:3:', 'error PM001[yaml-syntax-error]', 'did not find expected key'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'many-list-items': (2, [
    ], (
        'pmanifest: no Kubernetes object found in many-list-items.yaml (1 file read, no '
        'object with apiVersion and kind in it): nothing was checked; name the manifests to '
        'lint, or pass --allow-empty where none is expected')),
    'stray-brace': (1, [
        ('3:20:', 'error PM001[yaml-syntax-error]', 'did not find expected key'),
    ], '1 error, 0 warnings, 0 info in 1 file (0 objects)'),
    'syntax-error-then-valid': (1, [
        ('2:1:', 'error PM001[yaml-syntax-error]', 'did not find expected node content'),
        ('7:3:', 'error PM201[grace-period-over-limit]', 'GRACE_900'),
        ('9:17:', 'warning PM302[no-checkpoint-handler]', 'POD_NO_HANDLER'),
    ], '2 errors, 1 warning, 0 info in 1 file (1 object)'),
}

XFAIL: dict[str, str] = {}
# Known gaps asserted as they behave today (not crashes; see the closing note of issue 5):
# - template-null: `template: null` passes PM002 (the schema treats null as "present").


def _expected_stderr(summary: str) -> str:
    """The summary line as printed: every run names the rules it applied (those selected, and
    those a run always applies), so the table above stays the same when a rule is added; an
    exit-2 message as it is."""
    if summary.startswith("TEMPLATE_ONLY "):
        return (f"pmanifest: no Kubernetes object found in {summary.split()[1]}.yaml (1 file "
                "read, an unrendered template: lint the rendered output): nothing was checked; "
                "name the manifests to lint, or pass --allow-empty where none is expected\n")
    if not summary or summary.startswith("pmanifest:"):
        return summary + "\n" if summary else ""
    return f"{summary[:-1]}, {len(set(RULES) | set(ALWAYS))} rules)\n"


def _expected_stdout(name: str, rows: list[tuple[str, str, str]]) -> str:
    return "".join(f"{name}.yaml:{loc} {head} {MESSAGES.get(msg, msg)}\n"
                   for loc, head, msg in rows)


def _param(name: str) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=XFAIL[name])] if name in XFAIL else []
    return pytest.param(name, id=name, marks=marks)


def test_the_corpus_is_big_and_fully_specified() -> None:
    assert len(SMALL) >= 40
    assert set(SMALL) == set(EXPECTED)


@pytest.mark.parametrize("name", [_param(n) for n in SMALL])
def test_hostile_file(runner: CliRunner, tmp_path: Path, name: str) -> None:
    content = SMALL[name]
    raw = content if isinstance(content, bytes) else content.encode("utf-8")
    (tmp_path / f"{name}.yaml").write_bytes(raw)
    result = invoke(runner, ["lint", f"{name}.yaml"])
    code, rows, summary = EXPECTED[name]
    assert result.stdout == _expected_stdout(name, rows)
    assert result.stderr == _expected_stderr(summary)
    assert result.exit_code == code
    assert not (tmp_path / "MARKER").exists()  # no tag ever runs code


@pytest.mark.parametrize("name", ["binary-png", "python-apply", "billion-laughs", "deep-flow",
                                  "helm-whole-line", "crlf"])
def test_hostile_file_in_a_real_process(tmp_path: Path, name: str) -> None:
    content = SMALL[name]
    raw = content if isinstance(content, bytes) else content.encode("utf-8")
    (tmp_path / f"{name}.yaml").write_bytes(raw)
    proc = run_real(["lint", f"{name}.yaml"], tmp_path)
    code, rows, summary = EXPECTED[name]
    assert proc.stdout.decode() == _expected_stdout(name, rows)
    assert proc.stderr.decode() == _expected_stderr(summary)
    assert proc.returncode == code
    assert not (tmp_path / "MARKER").exists()


def test_python_tags_never_run_code_even_from_stdin(runner: CliRunner, tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    for name in ("python-apply", "python-new", "python-subprocess", "tag-directive-python",
                 "python-outside-objects"):
        text = str(SMALL[name]).replace("MARKER", str(marker))
        result = invoke(runner, ["lint", "-"], stdin=text.encode())
        if name == "python-outside-objects":  # no object: skipped, exit 2, nothing run
            assert (result.exit_code, result.stdout) == (2, "")
            continue
        assert result.exit_code == 1
        assert "unsupported YAML tag" in result.stdout
    assert not marker.exists()
