"""The pmanifest spec: its JSON Schema, its semantic checks and the validated model.

``load_spec(text, file)`` is the only way in. It parses with the safe loader, validates against
``SPEC_SCHEMA`` (draft 2020-12, ``fields``), then applies the checks a schema cannot express
(``checks``: placement rules of the preemptible contract, checkpoint paths on the shared
volume, name uniqueness). Every problem becomes a ``SpecError`` with the file, the 1-based
line and column of the offending key or value, and a message of the form ``what is wrong;
what to do`` (``messages``). The model (``model``) is what render reads. May import
``kube``, ``schema``, ``loader`` and ``io``.
"""

from __future__ import annotations

from collections.abc import Callable

from pmanifest.errors import ConfigError, SpecError
from pmanifest.kube.contract import ROLES
from pmanifest.kube.profile import DEFAULT_PROFILE, Profile, get_profile
from pmanifest.loader.documents import YamlProblem, load_single
from pmanifest.render.spec.checks import Checker
from pmanifest.render.spec.fields import SPEC_SCHEMA, schema_json
from pmanifest.render.spec.manifest import refuse_manifest, refuse_manifests
from pmanifest.render.spec.messages import check_schema
from pmanifest.render.spec.model import (
    API_VERSION,
    MIN_JOB_VERSION,
    SHARED_VOLUME_NAME,
    Checkpoint,
    SharedVolume,
    Spec,
    Volume,
    WorkloadSpec,
)
from pmanifest.render.spec.values import integral_floats_to_integers, refuse_non_string_keys

__all__ = [
    "API_VERSION", "MIN_JOB_VERSION", "ROLES", "SHARED_VOLUME_NAME", "SPEC_SCHEMA", "Checkpoint",
    "SharedVolume", "Spec", "Volume", "WorkloadSpec", "load_spec", "schema_json",
]


def load_spec(text: str, file: str, profile: Profile | None = None,
              fallback: Profile | None = None,
              resolve: Callable[[str], Profile] = get_profile) -> Spec:
    """Parse and validate a spec; a SpecError names the file, line and column of the problem.
    The profile is ``profile`` (a flag's), else the spec's ``cluster.profile`` (a name,
    ``resolve``d), else ``fallback`` (the config's), else the default."""
    try:
        loaded = load_single(text)
    except YamlProblem as problem:
        if problem.message.startswith("expected one YAML document"):
            refuse_manifests(text, file)  # a multi-document manifest file?
        todo = ("write a spec (see `pmanifest schema` and examples/)"
                if problem.message == "file is empty" else "fix the YAML")
        if problem.templated:
            todo = "a spec is plain YAML, not a template: write the values themselves"
        raise SpecError(f"{problem.message}; {todo}", file, problem.line,
                        problem.column) from None
    data, positions = loaded.data, loaded.positions
    if not isinstance(data, dict):
        pos = positions.value_at(())
        raise SpecError("the spec must be a mapping (apiVersion: pmanifest/v1, workloads: "
                        "[...]); see `pmanifest schema`", file, pos.line, pos.column)
    refuse_manifest(data, positions, file)
    check_schema(data, positions, file)
    refuse_non_string_keys(data, positions, file, text)
    integral_floats_to_integers(data)
    named = data.get("cluster", {}).get("profile")
    if profile is None and named is not None:  # --profile wins over cluster.profile
        try:
            profile = resolve(named)
        except ConfigError as exc:  # a name neither built in nor the config's: at its place
            pos = positions.value_at(("cluster", "profile"))
            raise SpecError(exc.message, file, pos.line, pos.column) from None
    if profile is None:  # cluster.profile wins over the config's
        profile = fallback or get_profile(DEFAULT_PROFILE)
    return Checker(data, positions, file, profile).spec()


