"""Spec -> Kubernetes objects through the Jinja2 templates in ``pmanifest.templates``.

Safety by construction: templates run in Jinja's sandbox with undefined variables as errors,
and every ``{{ expression }}`` goes through ``finalize_value``, which turns strings into YAML
double-quoted scalars written by PyYAML's emitter (so no spec string is ever interpreted as
YAML or Jinja), and lists/maps into flow collections of such scalars. The rendered text is
parsed back with the safe loader, validated against the Kubernetes schema of the target
version and only then dumped. The termination supervisor (templates/supervisor.sh) is fixed
text; the user's argv reaches it as positional parameters, never pasted into the script.

The whole output is built as one string; nothing is printed until everything succeeded.
"""


from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from pmanifest.errors import ConfigError, InputError, SpecError
from pmanifest.kube.profile import Profile, get_profile
from pmanifest.loader.documents import YamlProblem
from pmanifest.loader.emit import dump_documents
from pmanifest.render.context import workload_context
from pmanifest.render.distributed import distributed_objects, with_output
from pmanifest.render.runtime import check_runtime_support
from pmanifest.render.spec import MIN_JOB_VERSION, Spec, WorkloadSpec, load_spec
from pmanifest.render.templates import Overlay, render_one, template_environment, wrapper_text
from pmanifest.render.yamltext import Yaml, quote, to_yaml
from pmanifest.schema.kubernetes import DEFAULT_KUBERNETES_VERSION, resolve_version, version_tuple

__all__ = ["Fallback", "RenderOptions", "Rendered", "Yaml", "quote", "read_spec",
           "render_objects", "render_owned", "render_spec", "render_text", "to_yaml"]

KIND_ORDER = ("Service", "PodDisruptionBudget", "Deployment", "Job", "JobSet", "RayCluster",
              "RayJob")
TEMPLATES = {
    "Service": "service.yaml.j2",
    "PodDisruptionBudget": "poddisruptionbudget.yaml.j2",
    "Deployment": "deployment.yaml.j2",
    "Job": "job.yaml.j2",
}


# --- public entry point -----------------------------------------------------------------------

class Fallback(NamedTuple):
    """What stands where the flags and the spec's ``cluster:`` are silent (the command line
    gives the config's here), and how a profile name the spec gives is resolved."""

    profile: Profile | None = None  # else the default profile
    kubernetes_version: str | None = None  # else DEFAULT_KUBERNETES_VERSION
    resolve: Callable[[str], Profile] = get_profile  # cluster.profile -> its profile


class RenderOptions(NamedTuple):
    """How render is run: target version, templates, output format, profile.

    Precedence, field by field: these options (the flags) beat the spec's ``cluster:``
    fields, which beat ``fallback`` (the config), which beats the defaults."""

    kubernetes_version: str | None = None
    templates_dir: str | None = None
    output: str = "yaml"  # yaml | json
    profile: str | None = None  # provider profile; overrides cluster.profile
    distributed_output: str | None = None  # overrides distributed.output of every workload
    fallback: Fallback = Fallback()


class Rendered(NamedTuple):
    """What render produced: the whole output, and what it was made from (for the command
    line to check it further: lint warnings, the fit with a cluster)."""

    text: str  # the whole output, in the format asked for
    yaml: str  # the same objects as YAML
    spec: Spec
    version: str  # the Kubernetes version the objects were validated against
    owned: list[tuple[WorkloadSpec, dict[str, Any]]]  # each object with its spec workload


def render_text(text: str, file: str, options: RenderOptions | None = None,
                profile: Profile | None = None) -> str:
    """The complete output for one spec, or a PmanifestError; never a partial result."""
    return render_spec(text, file, options, profile).text


def render_spec(text: str, file: str, options: RenderOptions | None = None,
                profile: Profile | None = None) -> Rendered:
    """The output for one spec with what it was made from, or a PmanifestError."""
    options = options or RenderOptions()
    if options.output not in ("yaml", "json"):
        raise ConfigError(f"unknown output format {options.output!r}; use yaml or json")
    if profile is None and options.profile is not None:
        profile = options.fallback.resolve(options.profile)
    fallback = options.fallback
    # None: cluster.profile, else the fallback's, else the default
    spec = load_spec(text, file, profile, fallback.profile, fallback.resolve)
    profile = spec.profile
    if options.distributed_output is not None:
        spec = with_output(spec, options.distributed_output)
    version = _target_version(spec, options.kubernetes_version, fallback.kubernetes_version)
    _check_job_support(spec, version)
    check_runtime_support(spec, version)
    env = template_environment(options.templates_dir)
    owned = render_owned(spec, version, env, profile)
    objects = [obj for _, obj in owned]
    as_yaml = dump_documents(objects)
    if options.output == "json":
        listing = {"apiVersion": "v1", "kind": "List", "items": objects}
        as_json = json.dumps(listing, indent=2, ensure_ascii=False) + "\n"
        return Rendered(as_json, as_yaml, spec, version, owned)
    return Rendered(as_yaml, as_yaml, spec, version, owned)


def render_objects(spec: Spec, version: str, env: Any, profile: Profile) -> list[dict[str, Any]]:
    return [obj for _, obj in render_owned(spec, version, env, profile)]


def render_owned(spec: Spec, version: str, env: Any,
                 profile: Profile) -> list[tuple[WorkloadSpec, dict[str, Any]]]:
    """Every object in output order, with the spec workload it was rendered for (a
    distributed worker's rendezvous Deployment and Services too). Each object has its own
    time budget: a render's grows with its spec (1,000 workloads are 1,000 objects of
    pmanifest's own templates, which a busy machine takes seconds for), while no single
    template of the user's can run on past it."""
    import time

    from pmanifest.io.limits import TEMPLATE_SECONDS

    overlay_of = _overlays(spec, version)
    wrapper = wrapper_text(env)
    rendered: list[tuple[int, int, WorkloadSpec, dict[str, Any]]] = []
    for n, workload in enumerate(spec.workloads):
        if workload.distributed is not None:
            parts = distributed_objects(workload, spec, version, profile, wrapper)
        else:
            context = workload_context(workload, spec, version, profile, wrapper)
            parts = [(kind, TEMPLATES[kind], context) for kind in _kinds(workload)]
        overlay = overlay_of(workload)
        for kind, template, context in parts:
            obj = render_one(env, template, context, version,
                             time.monotonic() + TEMPLATE_SECONDS, overlay)
            rendered.append((KIND_ORDER.index(kind), n, workload, obj))
    rendered.sort(key=lambda item: (item[0], item[1]))  # stable: a workload's own order stays
    return [(workload, obj) for _, _, workload, obj in rendered]


def _overlays(spec: Spec, version: str) -> Callable[[WorkloadSpec], Overlay | None]:
    """The podTemplate merge of each workload (issue 26), checked before anything is merged;
    its modules load only for a spec that has one."""
    if not any(w.overlays for w in spec.workloads):
        return lambda _: None
    from pmanifest.render.overlay import overlay_for
    from pmanifest.render.overlay_checks import check_merged, check_overlays, refusing

    check_overlays(spec, version)
    guard, after = refusing(spec), check_merged(spec)
    return lambda w: overlay_for(w, spec, version, guard, after)


def _kinds(w: WorkloadSpec) -> list[str]:
    if w.role == "worker":
        return ["Job"]
    kinds = ["Deployment"]
    if w.ports:
        kinds.append("Service")
    if w.role == "serving" and w.replicas >= 2:
        kinds.append("PodDisruptionBudget")
    return kinds



# --- version ----------------------------------------------------------------------------------

def _target_version(spec: Spec, flag: str | None, fallback: str | None = None) -> str:
    if flag is not None:
        try:
            return resolve_version(flag)
        except ConfigError as exc:
            raise SpecError(f"--kubernetes-version: {exc.message}", spec.file) from None
    if spec.kubernetes_version is None:  # the config's (resolved when it was read)
        return fallback or DEFAULT_KUBERNETES_VERSION
    try:
        return resolve_version(spec.kubernetes_version)
    except ConfigError as exc:
        raise spec.error(("cluster", "kubernetesVersion"),
                         f"{exc.message}; change cluster.kubernetesVersion") from None


def _check_job_support(spec: Spec, version: str) -> None:
    if version_tuple(version) >= MIN_JOB_VERSION:
        return
    for w in spec.workloads:
        if w.role == "worker":
            need = ".".join(str(p) for p in MIN_JOB_VERSION)
            raise spec.error(w.path, f"worker {w.name!r} renders a Job, which needs Kubernetes "
                             f"{need} or later (podFailurePolicy, which keeps preemptions from "
                             f"counting as failures, is off by default before); target is "
                             f"{version}, so set cluster.kubernetesVersion or "
                             f"--kubernetes-version to {need} or later", value=False)



def read_spec(path: str) -> tuple[str, str]:
    """(text, display name) of a spec file, ``-`` for stdin; InputError when unreadable."""
    from pmanifest.io.reading import Unreadable, read_limited, read_stdin
    from pmanifest.loader.documents import decode

    name = "<stdin>" if path == "-" else path
    try:
        raw = (read_stdin() if path == "-" else read_limited(path))[0]
    except Unreadable as exc:
        raise InputError(f"cannot read the spec: {exc.reason}; check the path", name) from None
    except OSError as exc:  # a directory
        raise InputError(f"cannot read the spec: {exc.strerror or exc}; check the path",
                         name) from None
    try:
        return decode(raw), name
    except YamlProblem as problem:
        raise SpecError(f"{problem.message}; save the spec as UTF-8 text", name, problem.line,
                        problem.column) from None
