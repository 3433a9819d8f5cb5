"""Property: arbitrary text in free-text fields never changes the output's structure and
arrives byte for byte after parsing the output (YAML and JSON)."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pmanifest.render.engine import RenderOptions, render_text
from tests.hypothesis_profiles import examples

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


def _spec(env_value: str, arg: str, ckpt: str | list[str], trigger: str) -> dict[str, Any]:
    return {
        "apiVersion": "pmanifest/v1",
        "cluster": {"sharedVolume": {"claimName": "fs", "mountPath": "/mnt/shared"}},
        "workloads": [
            {
                "name": "train",
                "image": "ghcr.io/acme/trainer:1.4",
                "command": ["python", arg],
                "args": [arg, "--fixed"],
                "env": {"HOSTILE": env_value, "PLAIN": "x"},
                "annotations": {"acme.io/note": env_value},
                "checkpoint": {"command": ckpt, "trigger": trigger, "dir": "/mnt/shared/c"},
            },
            {
                "name": "api",
                "role": "serving",
                "image": "ghcr.io/acme/api:1",
                "command": ["serve", arg],
                "env": {"HOSTILE": env_value},
                "podAnnotations": {"acme.io/note": env_value},
                "probes": {"readiness": {"httpGet": {"port": 8000, "httpHeaders": [
                    {"name": "X-Note", "value": arg}]}}},
                "ports": [8000],
            },
        ],
    }


def _shape(value: Any) -> Any:
    """The structure with every string replaced by a placeholder."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return "<str>" if isinstance(value, str) else value


def _render(spec: dict[str, Any], output: str = "yaml") -> list[dict[str, Any]]:
    # JSON with ASCII escapes keeps the *input* spec exact: PyYAML's emitter writes a raw NEL
    # (U+0085) inside single quotes, where YAML folds it to a space, and 0E0 or Y unquoted,
    # which a spec (read as kubectl reads YAML) takes for a number or a boolean
    text = render_text(json.dumps(spec), "p.yaml",
                       RenderOptions(output=output))
    if output == "json":
        items: list[dict[str, Any]] = json.loads(text)["items"]
        return items
    return list(yaml.safe_load_all(text))


BASELINE: dict[str, Any] = {}


def _baseline(trigger: str, ckpt_is_str: bool) -> Any:
    key = f"{trigger}-{ckpt_is_str}"
    if key not in BASELINE:
        ckpt: str | list[str] = "save" if ckpt_is_str else ["save", "x"]
        BASELINE[key] = _shape(_render(_spec("v", "a", ckpt, trigger)))
    return BASELINE[key]


@settings(max_examples=examples(100), deadline=None)
@example(env_value="\x85", arg="\u2028", ckpt_text="\ufeff{{ x }}", ckpt_arg="\x85 ",
         as_string=False, trigger="sigterm", output="yaml")
@example(env_value="a\n--- b", arg="'; $(id) `id`", ckpt_text="x\r\ny", ckpt_arg="",
         as_string=True, trigger="preStop", output="yaml")
@given(env_value=TEXT, arg=TEXT, ckpt_text=TEXT.filter(bool), ckpt_arg=TEXT,
       as_string=st.booleans(), trigger=st.sampled_from(["sigterm", "preStop"]),
       output=st.sampled_from(["yaml", "json"]))
def test_hostile_text_arrives_unchanged(env_value: str, arg: str, ckpt_text: str,
                                        ckpt_arg: str, as_string: bool, trigger: str,
                                        output: str) -> None:
    ckpt: str | list[str] = ckpt_text if as_string else [ckpt_text, ckpt_arg]
    objects = _render(_spec(env_value, arg, ckpt, trigger), output)
    assert _shape(objects) == _baseline(trigger, as_string)
    kinds = [o["kind"] for o in objects]
    assert kinds == ["Service", "PodDisruptionBudget", "Deployment", "Job"]
    deployment, job = objects[2], objects[3]
    api = deployment["spec"]["template"]["spec"]["containers"][0]
    assert api["command"] == ["serve", arg]
    assert api["env"] == [{"name": "HOSTILE", "value": env_value}]
    assert job["metadata"]["annotations"] == {"acme.io/note": env_value}
    assert deployment["spec"]["template"]["metadata"]["annotations"] == {
        "acme.io/note": env_value}
    assert api["readinessProbe"]["httpGet"]["httpHeaders"] == [{"name": "X-Note",
                                                                 "value": arg}]
    train = job["spec"]["template"]["spec"]["containers"][0]
    assert train["env"][0] == {"name": "HOSTILE", "value": env_value}
    ckpt_argv = ["/bin/sh", "-c", ckpt_text] if as_string else [ckpt_text, ckpt_arg]
    main_argv = ["python", arg, arg, "--fixed"]
    assert train["args"] == main_argv  # the supervisor starts the main, whatever the trigger
    if trigger == "sigterm":
        assert train["command"][3:] == ["pmanifest-supervisor", "command", "290",
                                        str(len(ckpt_argv)), *ckpt_argv]
    else:
        assert train["command"][3:] == ["pmanifest-supervisor", "prestop", "10", "0"]
        # the hook: the supervisor's mark, then the checkpoint bounded below the grace period
        hook = train["lifecycle"]["preStop"]["exec"]["command"]
        assert hook[3:] == ["pmanifest-prestop", "290", *ckpt_argv]
