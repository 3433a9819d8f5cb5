"""Cluster requests from bodies and saved command lines, with exact positions."""

from __future__ import annotations

from pathlib import Path

import pytest

from pmanifest.cluster.request import CREATE, READ, UPDATE, parse_request, tokens
from pmanifest.errors import InputError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "cluster"

SEED_CREATE = """\
tg beta clusters create \\
  --name my-cluster \\
  --region us-central-2 \\
  --gpu-type RTX_6000_PCI \\
  --cluster-type KUBERNETES \\
  --num-gpus 8 \\
  --billing-type ON_DEMAND \\
  --nvidia-driver-version 570 \\
  --cuda-version 12.8 \\
  --num-preemptible-gpus 8 \\
  --project <PROJECT_ID> \\
  --non-interactive --json
"""


def test_the_seeds_create_command_line() -> None:
    request = parse_request(SEED_CREATE, "create.sh")
    assert (request.kind, request.form, request.start) == (CREATE, "command", (1, 1))
    assert {k: (v.value, v.pos, v.key) for k, v in request.fields.items()} == {
        "name": ("my-cluster", (2, 10), (2, 3)),
        "region": ("us-central-2", (3, 12), (3, 3)),
        "gpu_type": ("RTX_6000_PCI", (4, 14), (4, 3)),
        "cluster_type": ("KUBERNETES", (5, 18), (5, 3)),
        "num_gpus": (8, (6, 14), (6, 3)),
        "billing_type": ("ON_DEMAND", (7, 18), (7, 3)),
        "nvidia_driver_version": (570, (8, 27), (8, 3)),
        "cuda_version": ("12.8", (9, 18), (9, 3)),
        "num_preemptible_gpus": (8, (10, 26), (10, 3)),
        "project_id": ("<PROJECT_ID>", (11, 13), (11, 3)),
    }


def test_update_command_with_prompt_equals_and_environment() -> None:
    request = parse_request("# scale up\n$ TOGETHER_PROJECT_ID=p-7 tg beta clusters update "
                            "c-5f1e --num-preemptible-gpus=12\n", "u.sh")
    assert (request.kind, request.start) == (UPDATE, (2, 27))
    assert request.fields["num_preemptible_gpus"].value == 12
    assert request.fields["num_preemptible_gpus"].pos == (2, 81)
    assert request.fields["project_id"].value == "p-7"
    assert request.fields["project_id"].pos == (2, 23)


def test_global_flags_before_the_subcommand_and_quoting() -> None:
    request = parse_request('together --project "p 1" beta clusters create --name \'a b\' '
                            "--num-gpus 1\\\n6\n", "c.sh")
    assert request.kind == CREATE
    assert request.get("project_id") == "p 1"
    assert request.get("name") == "a b"
    assert request.get("num_gpus") == 16  # a continuation inside a word joins it


def test_tokens_follow_sh() -> None:
    words = tokens("a 'b c'\"d\\\"e\" f\\ g # comment\nh")
    assert [(w.text, w.pos) for w in words] == [
        ("a", (1, 1)), ('b cd"e', (1, 3)), ("f g", (1, 15)), ("h", (2, 1))]


@pytest.mark.parametrize(("name", "kind"), [
    ("create-request.json", CREATE), ("update-request.json", UPDATE),
    ("cluster-read.json", READ)])
def test_bodies_are_told_apart(name: str, kind: str) -> None:
    request = parse_request((EXAMPLES / name).read_text(), name)
    assert (request.kind, request.form, request.start) == (kind, "body", (1, 1))


def test_body_positions_and_override() -> None:
    request = parse_request('{\n  "num_preemptible_gpus": 12\n}\n', "u.json", kind=CREATE)
    assert request.kind == CREATE
    value = request.fields["num_preemptible_gpus"]
    assert (value.value, value.pos, value.key) == (12, (2, 27), (2, 3))


@pytest.mark.parametrize(("text", "message"), [
    ("tg beta clusters delete c-1\n", "x:1:1: expected `tg beta clusters create ...` or `tg "
     "beta clusters update ID ...`"),
    ("tg beta clusters create --name\n", "x:1:25: --name needs a value"),
    ("tg beta clusters create --name 'a\n", "x:1:32: unclosed ' in the command line"),
    ('tg beta clusters create --name "a\n', 'x:1:32: unclosed " in the command line'),
    ("[1, 2]\n", "x:1:1: expected a mapping of cluster fields (a request body or the JSON of a "
     "cluster read)"),
    ('{"num_gpus": 8,\n', "x:2:1: did not find expected node content; expected a cluster "
     "request body (JSON or YAML), the JSON of a cluster read, or a saved `tg beta clusters` "
     "command line"),
])
def test_bad_requests(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_request(text, "x")
    assert str(caught.value) == message


@pytest.mark.parametrize("end", ["\r", "\v", "\f", "\u2028", "\u2029", "\x85"])
def test_a_comment_runs_on_past_what_sh_does_not_end_a_line_with(end: str) -> None:
    """Issue 24: ``# note<CR>tg beta clusters create ...`` was taken for a command line (its
    lines were split as Python splits them) that the lexer, reading lines as sh does, saw none
    of: an IndexError. sh ends a comment at a line feed only."""
    text = f"# saved from my terminal{end}tg beta clusters create --num-gpus 8\n"
    with pytest.raises(InputError):
        parse_request(text, "x")
    after = parse_request(f"# saved{end}x\ntg beta clusters create --num-gpus 8\n", "x")
    assert (after.kind, after.get("num_gpus")) == (CREATE, 8)


def test_assignments_without_a_command() -> None:
    with pytest.raises(InputError) as caught:
        parse_request("TOGETHER_PROJECT_ID=p tg\n", "x")
    assert "expected `tg beta clusters create ...`" in str(caught.value)
