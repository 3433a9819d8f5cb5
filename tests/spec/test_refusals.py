"""Every refusal of a spec: exit 2, one exact line on stderr naming file:line:col, no stdout."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main

SHARED = "cluster:\n  sharedVolume: {claimName: fs, mountPath: /mnt/shared}\n"


def _bomb() -> str:
    lines = ["apiVersion: pmanifest/v1", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol"]']
    prev = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = name
    lines.append("workloads: [{name: x, image: y}]")
    return "\n".join(lines) + "\n"


CASES: list[tuple[str, str, str]] = [
    (
        "serving on preemptible",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            compute: preemptible
            image: x
        """,
        "spec.yaml:5:14: serving workloads cannot run on preemptible compute "
        "(compute: preemptible); remove it or use role: worker",
    ),
    (
        "coordinator on preemptible",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - {name: rdzv, role: coordinator, compute: preemptible, image: x}
        """,
        "spec.yaml:3:46: coordinator workloads cannot run on preemptible compute "
        "(compute: preemptible); remove it or use role: worker",
    ),
    (
        "grace above the cap",
        """\
        apiVersion: pmanifest/v1
        SHARED
        workloads:
          - name: train
            image: x
            command: [python, train.py]
            checkpoint:
              command: [python, ckpt.py]
              trigger: sigterm
              gracePeriodSeconds: 600
        """,
        "spec.yaml:11:27: gracePeriodSeconds 600 is above the 300 s cap of preemptible nodes "
        "(the node is removed after 300 s); use at most 300",
    ),
    (
        "checkpoint dir off the shared volume",
        """\
        apiVersion: pmanifest/v1
        SHARED
        workloads:
          - name: train
            image: x
            command: [python, train.py]
            checkpoint:
              command: [python, ckpt.py]
              trigger: sigterm
              dir: /mnt/shared/../home/ckpt
        """,
        "spec.yaml:11:12: checkpoint dir '/mnt/shared/../home/ckpt' is not on the shared volume "
        "(mounted at /mnt/shared); checkpoints elsewhere are lost with the node, so use a path "
        "under /mnt/shared/",
    ),
    (
        "checkpoint dir without a shared volume",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [python, train.py]
            checkpoint:
              command: [python, ckpt.py]
              trigger: preStop
              dir: /mnt/shared/ckpt
        """,
        "spec.yaml:9:12: checkpoint dir '/mnt/shared/ckpt' needs a shared volume, and the spec "
        "has none; add cluster.sharedVolume {claimName, mountPath} and put the dir under its "
        "mountPath",
    ),
    (
        "unknown trigger",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [python, train.py]
            checkpoint: {command: [python, ckpt.py], trigger: sigtrem}
        """,
        "spec.yaml:6:55: workloads[0].checkpoint.trigger is 'sigtrem', which is not one of "
        "sigterm, preStop; did you mean 'sigterm'?",
    ),
    (
        "name not a DNS-1123 label",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: Train_Job
            image: x
        """,
        "spec.yaml:3:11: workloads[0].name 'Train_Job' is not a DNS-1123 label; use at most 63 "
        "lowercase letters, digits and '-', starting and ending with a letter or digit",
    ),
    (
        "name longer than 63",
        f"""\
        apiVersion: pmanifest/v1
        workloads:
          - name: {"a" * 64}
            image: x
        """,
        f"spec.yaml:3:11: workloads[0].name '{'a' * 64}' is not a DNS-1123 label; use at most 63 "
        "lowercase letters, digits and '-', starting and ending with a letter or digit",
    ),
    (
        "missing image",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            command: [python, train.py]
        """,
        "spec.yaml:3:5: workload 'train' has no image; add image: <registry/repository:tag> "
        "(or set it in defaults)",
    ),
    (
        "unknown key with suggestion",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            comand: [python, train.py]
        """,
        "spec.yaml:5:5: unknown key 'comand' in workloads[0]; did you mean 'command'?",
    ),
    (
        "unknown top-level key",
        """\
        apiVersion: pmanifest/v1
        workload:
          - {name: train, image: x}
        """,
        "spec.yaml:2:1: unknown key 'workload' in the spec; did you mean 'workloads'?",
    ),
    (
        "unknown key without a close match",
        """\
        apiVersion: pmanifest/v1
        cluster: {zzz: 1}
        workloads:
          - {name: train, image: x}
        """,
        "spec.yaml:2:11: unknown key 'zzz' in cluster; remove it (allowed: kubernetesVersion, "
        "profile, sharedVolume)",
    ),
    (
        "invalid YAML",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: [train
        """,
        "spec.yaml:4:1: did not find expected ',' or ']'; fix the YAML",
    ),
    (
        "not a mapping",
        """\
        - apiVersion: pmanifest/v1
        """,
        "spec.yaml:1:1: the spec must be a mapping (apiVersion: pmanifest/v1, workloads: [...]); "
        "see `pmanifest schema`",
    ),
    (
        "wrong apiVersion",
        """\
        apiVersion: pmanifest/v2
        workloads: [{name: a, image: x}]
        """,
        "spec.yaml:1:13: apiVersion must be 'pmanifest/v1', got 'pmanifest/v2'; "
        "set apiVersion: pmanifest/v1",
    ),
    (
        "non-standard tag",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: !!python/object/apply:os.system [id]
        """,
        "spec.yaml:4:12: unsupported YAML tag 'tag:yaml.org,2002:python/object/apply:os.system'; "
        "fix the YAML",
    ),
    (
        "billion laughs",
        _bomb(),
        "spec.yaml:7:8: too many alias expansions (a YAML bomb?); fix the YAML",
    ),
    (
        "duplicate workload names",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            command: [run]
          - name: train
            role: serving
            image: y
        """,
        "spec.yaml:6:11: workload name 'train' is already used by workloads[0]; give each "
        "workload its own name",
    ),
    (
        "duplicate key",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            image: y
        """,
        "spec.yaml:5:5: duplicate key 'image'; fix the YAML",
    ),
    (
        "Jobs before 1.26",
        """\
        apiVersion: pmanifest/v1
        cluster: {kubernetesVersion: "1.25"}
        workloads:
          - name: train
            image: x
            command: [run]
        """,
        "spec.yaml:4:5: worker 'train' renders a Job, which needs Kubernetes 1.26 or later "
        "(podFailurePolicy, which keeps preemptions from counting as failures, is off by "
        "default before); target is 1.25, so set cluster.kubernetesVersion or "
        "--kubernetes-version to 1.26 or later",
    ),
    (
        "unquoted version",
        """\
        apiVersion: pmanifest/v1
        cluster: {kubernetesVersion: 1.30}
        workloads:
          - {name: train, image: x}
        """,
        "spec.yaml:2:30: cluster.kubernetesVersion must be a string, got number; quote it to "
        "make it a string",
    ),
    (
        "unsupported version",
        """\
        apiVersion: pmanifest/v1
        cluster: {kubernetesVersion: "1.12"}
        workloads:
          - {name: train, image: x, command: [run]}
        """,
        "spec.yaml:2:30: unsupported Kubernetes version '1.12'; supported: 1.25 to 1.37; change "
        "cluster.kubernetesVersion",
    ),
    (
        "unknown role",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - {name: train, image: x, role: server}
        """,
        "spec.yaml:3:35: workloads[0].role is 'server', which is not one of worker, "
        "coordinator, serving; did you mean 'serving'?",
    ),
    (
        "worker without a command",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            checkpoint: {command: "save", trigger: preStop}
        """,
        "spec.yaml:3:5: worker 'train' has no command: workers run under pmanifest's "
        "termination supervisor, which starts the main itself, and the image's ENTRYPOINT "
        "cannot be known from the spec; add the image's entrypoint and arguments, e.g. "
        "command: [python, train.py] and args: [--resume]",
    ),
    (
        "sigterm without a command",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: rdzv
            role: coordinator
            image: x
            checkpoint: {command: "save", trigger: sigterm}
        """,
        "spec.yaml:6:44: trigger: sigterm wraps the main command, but the workload has no "
        "command; add command: [...] or use trigger: preStop",
    ),
    (
        "replicas on a worker",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - {name: train, image: x, replicas: 3}
        """,
        "spec.yaml:3:29: replicas applies to coordinator or serving workloads, not worker; "
        "remove it or change role",
    ),
    (
        "compute-class label in nodeSelector",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: api
            role: serving
            image: x
            nodeSelector: {together.ai/compute-class: preemptible}
        """,
        "spec.yaml:6:20: nodeSelector must not set 'together.ai/compute-class'; use compute: "
        "preemptible or compute: standard",
    ),
    (
        "volume with two sources",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: data, mountPath: /data, claimName: datasets, emptyDir: {}}
        """,
        "spec.yaml:6:61: workloads[0].volumes[0] has 2 sources (claimName, emptyDir); keep "
        "exactly one, and give each source its own volume",
    ),
    (
        "volume without a source",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - name: data
                mountPath: /data
        """,
        "spec.yaml:6:9: workloads[0].volumes[0] has no source; add one of claimName, "
        "configMap, secret, emptyDir (e.g. claimName: <PersistentVolumeClaim>, or emptyDir: {})",
    ),
    (
        "hostPath volume",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: nvme, mountPath: /scratch, hostPath: {path: /mnt/nvme}}
        """,
        "spec.yaml:6:43: hostPath volumes are not offered: they are the node's local disk, lost "
        "when a preemptible node is reclaimed, and they expose the node to the pod; use "
        "claimName (a PersistentVolumeClaim) for data, or emptyDir: {} for scratch",
    ),
    (
        "hostPath volume in defaults",
        """\
        apiVersion: pmanifest/v1
        defaults:
          volumes: [{name: nvme, mountPath: /scratch, claimName: c, hostPath: {path: /x}}]
        workloads:
          - {name: train, image: x}
        """,
        "spec.yaml:3:61: hostPath volumes are not offered: they are the node's local disk, lost "
        "when a preemptible node is reclaimed, and they expose the node to the pod; use "
        "claimName (a PersistentVolumeClaim) for data, or emptyDir: {} for scratch",
    ),
    (
        "typo inside a volume",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: data, mountPath: /data, claimNme: datasets}
        """,
        "spec.yaml:6:40: unknown key 'claimNme' in workloads[0].volumes[0]; did you mean "
        "'claimName'?",
    ),
    (
        "typo inside a volume's emptyDir",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: dshm, mountPath: /dev/shm, emptyDir: {medum: Memory}}
        """,
        "spec.yaml:6:54: unknown key 'medum' in workloads[0].volumes[0].emptyDir; did you mean "
        "'medium'?",
    ),
    (
        "duplicate volume name across defaults and workload",
        """\
        apiVersion: pmanifest/v1
        defaults:
          volumes: [{name: data, mountPath: /data, claimName: datasets}]
        workloads:
          - name: train
            image: x
            volumes:
              - {name: data, mountPath: /data2, configMap: settings}
        """,
        "spec.yaml:8:16: volume name 'data' is already used by defaults.volumes[0]; give each "
        "volume its own name",
    ),
    (
        "duplicate volume mountPath",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: data, mountPath: /data, claimName: datasets}
              - {name: settings, mountPath: /data/, configMap: settings}
        """,
        "spec.yaml:7:37: mountPath '/data' is already used by workloads[0].volumes[0]; mount "
        "each volume at its own path",
    ),
    (
        "volume mounted under the shared volume",
        """\
        apiVersion: pmanifest/v1
        SHARED
        workloads:
          - name: train
            image: x
            volumes:
              - {name: scratch, mountPath: /mnt/shared/scratch, emptyDir: {}}
        """,
        "spec.yaml:8:36: mountPath '/mnt/shared/scratch' is inside the shared volume (mounted "
        "at /mnt/shared), which it would hide and whose writes it would catch; mount it outside "
        "/mnt/shared",
    ),
    (
        "volume mounted at the shared volume's path",
        """\
        apiVersion: pmanifest/v1
        SHARED
        workloads:
          - name: train
            image: x
            volumes:
              - {name: scratch, mountPath: /mnt/shared/, emptyDir: {}}
        """,
        "spec.yaml:8:36: mountPath '/mnt/shared/' is the shared volume's mountPath, which it "
        "would hide and whose writes it would catch; mount it outside /mnt/shared",
    ),
    (
        "relative volume mountPath",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: data, mountPath: data, claimName: datasets}
        """,
        "spec.yaml:6:33: workloads[0].volumes[0].mountPath 'data' does not match ^/; use an "
        "absolute path (starting with /)",
    ),
    (
        "volume mountPath with ..",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: data, mountPath: /data/../etc, claimName: datasets}
        """,
        "spec.yaml:6:33: mountPath '/data/../etc' contains '..'; give the absolute path "
        "without it",
    ),
    (
        "volume mounted at /",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: data, mountPath: /, claimName: datasets}
        """,
        "spec.yaml:6:33: a volume cannot be mounted at /; use a directory such as /mnt/data",
    ),
    (
        "volume name not a DNS-1123 label",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: Data_Sets, mountPath: /data, claimName: datasets}
        """,
        "spec.yaml:6:16: workloads[0].volumes[0].name 'Data_Sets' is not a DNS-1123 label; use "
        "at most 63 lowercase letters, digits and '-', starting and ending with a letter or "
        "digit",
    ),
    (
        "volume named like the shared volume",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: shared, mountPath: /data, claimName: datasets}
        """,
        "spec.yaml:6:16: volume name 'shared' is taken by the shared volume; choose another name",
    ),
    (
        "volume subPath leaving the volume",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: data, mountPath: /data, claimName: datasets, subPath: a/../../b}
        """,
        "spec.yaml:6:70: subPath 'a/../../b' must be a relative path inside the volume, "
        "without '..'; e.g. subPath: datasets",
    ),
    (
        "volume claim not a DNS-1123 subdomain",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: data, mountPath: /data, secret: My_Secret}
        """,
        "spec.yaml:6:48: workloads[0].volumes[0].secret 'My_Secret' is not a DNS-1123 "
        "subdomain; use at most 253 lowercase letters, digits, '-' and '.', starting and "
        "ending with a letter or digit",
    ),
    (
        "emptyDir sizeLimit not a quantity",
        """\
        apiVersion: pmanifest/v1
        workloads:
          - name: train
            image: x
            volumes:
              - {name: dshm, mountPath: /dev/shm, emptyDir: {medium: Memory, sizeLimit: lots}}
        """,
        "spec.yaml:6:81: workloads[0].volumes[0].emptyDir.sizeLimit 'lots' does not match "
        r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$; use a "
        "Kubernetes quantity such as 64Gi",
    ),
    (
        "checkpoint dir on an emptyDir volume",
        """\
        apiVersion: pmanifest/v1
        SHARED
        workloads:
          - name: train
            image: x
            command: [python, train.py]
            volumes:
              - {name: scratch, mountPath: /scratch, emptyDir: {}}
            checkpoint:
              command: [python, ckpt.py]
              trigger: sigterm
              dir: /scratch/ckpt
        """,
        "spec.yaml:13:12: checkpoint dir '/scratch/ckpt' is not on the shared volume (mounted "
        "at /mnt/shared); checkpoints elsewhere are lost with the node, so use a path under "
        "/mnt/shared/",
    ),
    (
        "checkpoint dir on another claim",
        """\
        apiVersion: pmanifest/v1
        SHARED
        workloads:
          - name: train
            image: x
            command: [python, train.py]
            volumes:
              - {name: data, mountPath: /data, claimName: datasets}
            checkpoint:
              command: [python, ckpt.py]
              trigger: preStop
              dir: /data/ckpt
        """,
        "spec.yaml:13:12: checkpoint dir '/data/ckpt' is not on the shared volume (mounted at "
        "/mnt/shared); checkpoints elsewhere are lost with the node, so use a path under "
        "/mnt/shared/",
    ),
    (
        "empty file",
        "",
        "spec.yaml:1:1: file is empty; write a spec (see `pmanifest schema` and examples/)",
    ),
]


@pytest.mark.parametrize(("spec", "expected"), [(c[1], c[2]) for c in CASES],
                         ids=[c[0] for c in CASES])
def test_refusal(spec: str, expected: str, tmp_path: object, monkeypatch: pytest.MonkeyPatch
                 ) -> None:
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]
    text = textwrap.dedent(spec)
    if "SHARED" in text:
        text = text.replace("SHARED\n", SHARED)
    with open("spec.yaml", "w", encoding="utf-8") as handle:
        handle.write(text)
    result = CliRunner().invoke(main, ["render", "-f", "spec.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", expected + "\n")


def test_refusal_from_stdin_names_stdin() -> None:
    spec = "apiVersion: pmanifest/v1\nworkloads:\n  - {name: x, image: y, role: serving, " \
           "compute: preemptible}\n"
    result = CliRunner().invoke(main, ["render", "-f", "-"], input=spec)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        "<stdin>:3:49: serving workloads cannot run on preemptible compute (compute: "
        "preemptible); remove it or use role: worker\n")


def test_old_version_from_flag(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # type: ignore[arg-type]
    with open("spec.yaml", "w", encoding="utf-8") as handle:
        handle.write("apiVersion: pmanifest/v1\nworkloads:\n"
                     "  - {name: train, image: x, command: [run]}\n")
    result = CliRunner().invoke(main, ["render", "-f", "spec.yaml",
                                       "--kubernetes-version", "1.25"])
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith("spec.yaml:3:5: worker 'train' renders a Job, which needs "
                                    "Kubernetes 1.26 or later")
    result = CliRunner().invoke(main, ["render", "-f", "spec.yaml",
                                       "--kubernetes-version", "2.0"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "spec.yaml: --kubernetes-version: unsupported Kubernetes version '2.0'; "
        "supported: 1.25 to 1.37\n")


def test_missing_file() -> None:
    result = CliRunner().invoke(main, ["render", "-f", "/nonexistent/spec.yaml"])
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "/nonexistent/spec.yaml: cannot read the spec: No such file or directory; "
        "check the path\n")
