"""The ``distributed`` field: its model (defaults, the torchrun program) and every refusal, with
the exact one-line message at the exact position."""

from __future__ import annotations

import textwrap

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.render.spec import load_spec
from pmanifest.render.spec.model import Distributed


def _spec(workload: str) -> str:
    body = textwrap.indent(textwrap.dedent(workload), "    ")
    return f"apiVersion: pmanifest/v1\nworkloads:\n  - name: trainer\n    image: x\n{body}"


def _model(workload: str) -> Distributed:
    distributed = load_spec(_spec(workload), "spec.yaml").workloads[0].distributed
    assert distributed is not None
    return distributed


def test_defaults() -> None:
    d = _model("command: [python, train.py]\ngpus: 8\ndistributed: {maxNodes: 4}\n")
    assert d == Distributed(framework="torchrun", output="job", min_nodes=1, max_nodes=4,
                            nproc_per_node=8, program=("train.py",), max_restarts=10,
                            rdzv_port=29400, join_timeout_seconds=600,
                            last_call_timeout_seconds=30, jobset_max_restarts=3)
    assert _model("command: [python, t.py]\ndistributed: {maxNodes: 2}\n").nproc_per_node == 1
    ray = _model("command: [python, t.py]\ndistributed: {maxNodes: 2, framework: ray}\n")
    assert (ray.output, ray.program) == ("rayjob", ("python", "t.py"))


@pytest.mark.parametrize(("command", "program"), [
    ("[python, train.py, --lr, '3e-4']", ("train.py", "--lr", "3e-4")),
    ("[python3.11, -m, acme.train, -c, x]", ("-m", "acme.train", "-c", "x")),
    ("[/usr/bin/python3, train.py]", ("train.py",)),
    ("[./train.sh, 1]", ("--no-python", "./train.sh", "1")),
])
def test_torchrun_program(command: str, program: tuple[str, ...]) -> None:
    assert _model(f"command: {command}\ndistributed: {{maxNodes: 2}}\n").program == program


REFUSALS = [
    ("command: [python, t.py]\ndistributed: {maxNodes: 2, minNodes: 3}\n",
     "spec.yaml:6:42: minNodes 3 is above maxNodes 2; use at most 2"),
    ("command: [python, t.py]\ndistributed: {maxNodes: 2, rayVersion: '2.9.0'}\n",
     "spec.yaml:6:32: rayVersion applies to framework: ray, not torchrun; remove it"),
    ("command: [python, t.py]\ndistributed: {maxNodes: 2, framework: ray, rdzvPort: 1}\n",
     "spec.yaml:6:48: rdzvPort applies to framework: torchrun, not ray; remove it"),
    ("command: [python, t.py]\ndistributed: {maxNodes: 2, framework: ray, output: job}\n",
     "spec.yaml:6:56: output 'job' is not made by framework ray; use rayjob or raycluster"),
    ("command: [python, t.py]\nactiveDeadlineSeconds: 86400\n"
     "distributed: {maxNodes: 2, framework: ray, output: raycluster}\n",
     "spec.yaml:6:5: activeDeadlineSeconds bounds a run, and a RayCluster (output: raycluster) "
     "is no run: it lives until deleted; use output: rayjob, or remove activeDeadlineSeconds"),
    ("command: [python, t.py]\ndistributed: {maxNodes: 2, jobSetMaxRestarts: 1}\n",
     "spec.yaml:6:32: jobSetMaxRestarts applies to output: jobset only; remove it"),
    ("command: [python, t.py]\nparallelism: 2\ndistributed: {maxNodes: 2}\n",
     "spec.yaml:6:5: parallelism of a distributed worker comes from distributed.maxNodes; "
     "remove it"),
    ("role: coordinator\ncommand: [python, t.py]\ndistributed: {maxNodes: 2}\n",
     "spec.yaml:7:5: distributed applies to role: worker, not coordinator; the rendezvous "
     "host or Ray head is rendered with it"),
    ("distributed: {maxNodes: 2}\n",
     "spec.yaml:3:5: worker 'trainer' has no command: workers run under pmanifest's "
     "termination supervisor, which starts the main itself, and the image's ENTRYPOINT cannot "
     "be known from the spec; add the image's entrypoint and arguments, e.g. command: [python, "
     "train.py] and args: [--resume]"),
    ("command: [torchrun, --nnodes, '2', train.py]\ndistributed: {maxNodes: 2}\n",
     "spec.yaml:5:14: command is the training command that torchrun runs (e.g. [python, "
     "train.py]); distributed renders torchrun and its flags, so remove them"),
    ("command: [python, -u, train.py]\ndistributed: {maxNodes: 2}\n",
     "spec.yaml:5:14: torchrun runs `python SCRIPT ARGS` or `python -m MODULE ARGS` (without "
     "interpreter options); write command: [python, train.py, ...]"),
    ("command: [python, t.py]\ndistributed: {maxNodes: 0}\n",
     "spec.yaml:6:29: workloads[0].distributed.maxNodes must be at least 1, got 0; change the "
     "value"),
    ("command: [python, t.py]\ndistributed: {maxNodes: 2, nodes: 3}\n",
     "spec.yaml:6:32: unknown key 'nodes' in workloads[0].distributed; did you mean "
     "'minNodes'?"),
]


@pytest.mark.parametrize(("workload", "message"), REFUSALS)
def test_refused(workload: str, message: str) -> None:
    result = CliRunner().invoke(main, ["render", "-f", "-"], input=_spec(workload))
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", message.replace(
        "spec.yaml", "<stdin>") + "\n")


def test_long_name_refused() -> None:
    text = _spec("command: [python, t.py]\ndistributed: {maxNodes: 2}\n").replace(
        "trainer", "t" * 41)
    result = CliRunner().invoke(main, ["render", "-f", "-"], input=text)
    assert result.exit_code == 2
    assert result.stderr.startswith("<stdin>:3:11: name 'ttttt")
    assert "use at most 40 characters" in result.stderr
