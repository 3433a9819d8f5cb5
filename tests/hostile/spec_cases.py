"""Hostile spec files for ``pmanifest render -f`` (expected outcomes in test_spec_input.py)."""

from __future__ import annotations

from tests.hostile.corpus import billion_laughs

HEAD = "apiVersion: pmanifest/v1\n"
W = HEAD + "workloads:\n  - name: a\n    image: ghcr.io/acme/t:1\n"

SPECS: dict[str, bytes | str] = {
    "empty": "",
    "comment-only": "# a spec\n",
    "syntax-error": HEAD + "workloads: [\n",
    "duplicate-key": HEAD + "workloads: []\nworkloads: []\n",
    "alias-bomb": billion_laughs(),
    "recursive-alias": "a: &a [*a]\n",
    "deep-nesting": "a: " + "[" * 10_000 + "]" * 10_000 + "\n",
    "binary": b"\x7fELF\x02\x01\x01\x00\x00\x00",
    "invalid-utf8": HEAD.encode() + b"workloads: [\xff]\n",
    "bom-wrong-type": b"\xef\xbb\xbf" + HEAD.encode() + b"workloads: 5\n",
    "python-tag": HEAD + "workloads: !!python/object/apply:os.system ['touch MARKER']\n",
    "custom-tag": HEAD + "workloads: !Ref Workloads\n",
    "bare-scalar": "hello\n",
    "top-level-list": "- apiVersion: pmanifest/v1\n",
    "two-documents": W + "---\n" + W,
    "api-version-int": "apiVersion: 1\nworkloads: []\n",
    "workloads-map": HEAD + "workloads: {a: 1}\n",
    "workload-scalar": HEAD + "workloads: [finetune]\n",
    "cluster-list": "cluster: [1]\n" + W,
    "defaults-string": "defaults: ml\n" + W,
    "gpus-string": W + '    gpus: "8"\n',
    "env-list": W + "    env: [A=b]\n",
    "env-value-map": W + "    env: {A: {b: c}}\n",
    "command-map": W + "    command: {python: t.py}\n",
    "ports-string": W + '    ports: "8000"\n',
    "checkpoint-string": W + "    checkpoint: now\n",
    "checkpoint-grace-string": W + '    checkpoint: {command: [x], gracePeriodSeconds: "300"}\n',
    "checkpoint-grace-huge": W + "    checkpoint: {command: [x], gracePeriodSeconds: "
                                 + "9" * 30 + "}\n",
    "checkpoint-command-int": W + "    checkpoint: {command: 5}\n",
    "role-unknown": W + "    role: boss\n",
    "name-hostile": HEAD + "workloads:\n  - {name: \"a; rm -rf /\", image: x}\n",
    "helm-template": HEAD + "workloads:\n  - name: {{ .Values.name }}\n",
    "nul-byte": HEAD.encode() + b"workloads: []\x00\n",
    # keys that are not strings, where the schema allows any key (issue 15, item 15)
    "labels-int-key": W + "    labels: {1: x}\n",
    "env-int-key": W + "    env: {A: b, 1: x}\n",
    "node-selector-int-key-in-defaults": "defaults: {nodeSelector: {8: x}}\n" + W,
    "requests-int-key": W + "    resources: {requests: {cpu: 1, 2: 3}}\n",
    "aliased-int-key": W + "    gpus: &g 1\n    env: {*g : x}\n",
    "int-key-in-a-toleration-list": W + "    tolerations: [{key: a}, {7: b}]\n",
    "hex-int-key": W + "    labels:\n      0x10: x\n",
}
