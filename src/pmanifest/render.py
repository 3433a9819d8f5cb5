"""Spec -> Kubernetes objects through the Jinja2 templates in ``pmanifest.templates``.

Safety by construction: templates run in Jinja's sandbox with undefined variables as errors,
and every ``{{ expression }}`` goes through ``_finalize``, which turns strings into YAML
double-quoted scalars written by PyYAML's emitter (so no spec string is ever interpreted as
YAML or Jinja), and lists/maps into flow collections of such scalars. The rendered text is
parsed back with the safe loader, validated against the Kubernetes schema of the target
version and only then dumped. The SIGTERM wrapper is fixed text; the user's argv reaches it
as positional parameters, never pasted into the script.

The whole output is built as one string; nothing is printed until everything succeeded.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any

import yaml

from pmanifest.errors import ConfigError, InputError, SpecError, TemplateError
from pmanifest.loader import YamlProblem, load_single
from pmanifest.profile import Profile, get_profile
from pmanifest.schema import DEFAULT_KUBERNETES_VERSION, resolve_version, validate, version_tuple
from pmanifest.spec import (
    MIN_JOB_VERSION,
    SHARED_VOLUME_NAME,
    Spec,
    Volume,
    Workload,
    load_spec,
)

KIND_ORDER = ("Service", "PodDisruptionBudget", "Deployment", "Job")
TEMPLATES = {
    "Service": "service.yaml.j2",
    "PodDisruptionBudget": "poddisruptionbudget.yaml.j2",
    "Deployment": "deployment.yaml.j2",
    "Job": "job.yaml.j2",
}
WRAPPER_TEMPLATE = "sigterm-wrapper.sh"
WRAPPER_NAME = "pmanifest-sigterm"  # $0 of the wrapper, visible in ps
HANDLER_EXIT_CODE = 143  # 128 + SIGTERM: what the wrapper (and a killed process) exits with
POD_REPLACEMENT_SINCE = (1, 29)  # podReplacementPolicy beta, on by default (GA 1.34)
# Before 1.29 the OpenAPI schema marks onPodConditions required in every podFailurePolicy rule,
# even in an onExitCodes rule; the API server accepts an empty list there.
CONDITIONS_OPTIONAL_SINCE = (1, 29)
_BUILTIN_PREFIX = "pmanifest/templates/"


class Yaml(str):
    """Text that is already YAML (a filter's output); ``_finalize`` passes it through."""

    __slots__ = ()


def quote(value: str) -> Yaml:
    """A YAML double-quoted scalar for any string, written by PyYAML's emitter."""
    text = yaml.dump(value, Dumper=yaml.SafeDumper, default_style='"', width=float("inf"),
                     allow_unicode=True)
    return Yaml(text.rstrip("\n"))


def to_yaml(value: Any) -> Yaml:
    """Any plain value as one line of YAML: strings quoted, collections in flow style."""
    if isinstance(value, Yaml):
        return value
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, bool):
        return Yaml("true" if value else "false")
    if isinstance(value, int):
        return Yaml(str(value))
    if value is None:
        return Yaml("null")
    if isinstance(value, list | tuple):
        return Yaml("[" + ", ".join(to_yaml(v) for v in value) + "]")
    if isinstance(value, dict):
        items = (f"{to_yaml(str(k))}: {to_yaml(v)}" for k, v in value.items())
        return Yaml("{" + ", ".join(items) + "}")
    raise TypeError(f"cannot put a {type(value).__name__} into a template")


def _finalize(value: Any) -> str:
    from jinja2 import Undefined

    if isinstance(value, Undefined):
        str(value)  # StrictUndefined raises UndefinedError naming the variable
    return to_yaml(value)


# --- public entry point -----------------------------------------------------------------------

@dataclass(frozen=True)
class RenderOptions:
    kubernetes_version: str | None = None
    templates_dir: str | None = None
    output: str = "yaml"  # yaml | json
    profile: str | None = None  # provider profile; overrides cluster.profile


def render_text(text: str, file: str, options: RenderOptions | None = None,
                profile: Profile | None = None) -> str:
    """The complete output for one spec, or a PmanifestError; never a partial result."""
    options = options or RenderOptions()
    if profile is None and options.profile is not None:
        profile = get_profile(options.profile)
    spec = load_spec(text, file, profile)  # None: cluster.profile, else the default
    profile = spec.profile
    version = _target_version(spec, options.kubernetes_version)
    _check_job_support(spec, version)
    env = _environment(options.templates_dir)
    objects = render_objects(spec, version, env, profile)
    if options.output == "json":
        listing = {"apiVersion": "v1", "kind": "List", "items": objects}
        return json.dumps(listing, indent=2, ensure_ascii=False) + "\n"
    if options.output != "yaml":
        raise ConfigError(f"unknown output format {options.output!r}; use yaml or json")
    return dump_yaml(objects)


def render_objects(spec: Spec, version: str, env: Any, profile: Profile) -> list[dict[str, Any]]:
    wrapper = _wrapper_text(env)
    rendered: list[tuple[int, int, dict[str, Any]]] = []
    for n, workload in enumerate(spec.workloads):
        context = workload_context(workload, spec, version, profile, wrapper)
        for kind in _kinds(workload):
            obj = _render_one(env, TEMPLATES[kind], context, version)
            rendered.append((KIND_ORDER.index(kind), n, obj))
    rendered.sort(key=lambda item: (item[0], item[1]))
    return [obj for _, _, obj in rendered]


def _kinds(w: Workload) -> list[str]:
    if w.role == "worker":
        return ["Job"]
    kinds = ["Deployment"]
    if w.ports:
        kinds.append("Service")
    if w.role == "serving" and w.replicas >= 2:
        kinds.append("PodDisruptionBudget")
    return kinds


class _Dumper(yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") else yaml.SafeDumper):  # type: ignore[misc]
    """Safe dumper that writes multi-line strings (the wrapper script) as literal blocks."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(objects: list[dict[str, Any]]) -> str:
    text: str = yaml.dump_all(objects, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                              default_flow_style=False, explicit_start=True, width=100)
    return text


# --- version ----------------------------------------------------------------------------------

def _target_version(spec: Spec, flag: str | None) -> str:
    if flag is not None:
        try:
            return resolve_version(flag)
        except ConfigError as exc:
            raise SpecError(f"--kubernetes-version: {exc.message}", spec.file) from None
    if spec.kubernetes_version is None:
        return DEFAULT_KUBERNETES_VERSION
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


# --- templates --------------------------------------------------------------------------------

def _builtin_source(name: str) -> tuple[str, str, Callable[[], bool]] | None:
    resource = importlib.resources.files("pmanifest.templates").joinpath(name)
    if "/" in name or "\\" in name or not resource.is_file():
        return None
    return resource.read_text(encoding="utf-8"), _BUILTIN_PREFIX + name, lambda: True


def _user_source(root: FsPath, name: str) -> tuple[str, str, Callable[[], bool]] | None:
    """A template of ``--templates DIR`` by plain file name. Nothing outside the directory is
    readable: not through ``..`` or an absolute name, nor through a symbolic link."""
    if "/" in name or "\\" in name or name in ("", ".", ".."):
        return None
    path = root / name
    if not path.is_file():
        return None
    real = path.resolve()
    if real.parent != root:
        raise InputError(f"template {name!r} leads outside the --templates directory "
                         f"(to {real}); copy the file into the directory instead", str(path))
    mtime = real.stat().st_mtime
    return real.read_text(encoding="utf-8"), str(path), lambda: real.stat().st_mtime == mtime


def _environment(templates_dir: str | None) -> Any:
    from jinja2 import ChoiceLoader, FunctionLoader, StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    loaders: list[Any] = []
    if templates_dir is not None:
        if not FsPath(templates_dir).is_dir():
            raise InputError("--templates: not a directory; give a directory of *.j2 files",
                             templates_dir)
        root = FsPath(templates_dir).resolve()
        loaders.append(FunctionLoader(functools.partial(_user_source, root)))
    loaders.append(FunctionLoader(_builtin_source))
    env = SandboxedEnvironment(
        loader=ChoiceLoader(loaders), undefined=StrictUndefined, autoescape=False,
        finalize=_finalize, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
    )
    env.filters["q"] = quote
    env.filters["yaml"] = to_yaml
    return env


def _wrapper_text(env: Any) -> str:
    from jinja2 import TemplateNotFound

    try:
        source, _, _ = env.loader.get_source(env, WRAPPER_TEMPLATE)
    except TemplateNotFound:
        raise TemplateError("template not found; reinstall pmanifest",
                            _BUILTIN_PREFIX + WRAPPER_TEMPLATE) from None
    text: str = source
    return text


def _render_one(env: Any, name: str, context: dict[str, Any], version: str) -> dict[str, Any]:
    from jinja2 import TemplateError as JinjaError
    from jinja2 import TemplateNotFound, TemplateSyntaxError

    filename = _BUILTIN_PREFIX + name
    try:
        template = env.get_template(name)
        filename = template.filename or filename
        text = template.render(**context)
    except TemplateSyntaxError as exc:
        raise TemplateError(f"template syntax error: {exc.message}; fix the template",
                            exc.filename or filename, exc.lineno) from None
    except TemplateNotFound as exc:
        raise TemplateError(f"template {exc.name!r} not found; add it to --templates or "
                            "reinstall pmanifest", filename) from None
    except (JinjaError, TypeError) as exc:
        raise TemplateError(f"template failed: {exc}; fix the template", filename) from None
    try:
        obj = load_single(text).data
    except YamlProblem as problem:
        raise TemplateError(f"rendered text is not valid YAML (line {problem.line}, column "
                            f"{problem.column} of the output): {problem.message}; fix the "
                            "template", filename) from None
    if not isinstance(obj, dict) or not isinstance(obj.get("kind"), str):
        raise TemplateError("template must render one mapping with apiVersion and kind; fix "
                            "the template", filename)
    problems = validate(obj, version)
    if problems:
        first = problems[0]
        where = ".".join(str(p) for p in first.path) or "(root)"
        raise TemplateError(f"rendered {obj['kind']} is not valid for Kubernetes {version}: "
                            f"{where}: {first.message}; fix the template", filename)
    return obj


# --- context: everything the templates need, decided here, laid out there ------------------

def workload_context(w: Workload, spec: Spec, version: str, profile: Profile,
                     wrapper: str) -> dict[str, Any]:
    labels = {
        "app.kubernetes.io/name": w.name,
        "app.kubernetes.io/managed-by": "pmanifest",
        "pmanifest.io/role": w.role,
        **w.labels,
    }
    metadata: dict[str, Any] = {"name": w.name, "labels": labels}
    if w.namespace is not None:
        metadata = {"name": w.name, "namespace": w.namespace, "labels": labels}
    return {
        "workload": {
            "name": w.name,
            "role": w.role,
            "compute": w.compute,
            "metadata": metadata,
            "labels": labels,
            "selector": {"app.kubernetes.io/name": w.name},
            "replicas": w.replicas,
            "ports": list(w.ports),
        },
        "job": _job_context(w, version),
        "deployment": {"strategy": "Recreate" if w.role == "coordinator" else "RollingUpdate"},
        "pod": _pod_context(w, spec, profile, wrapper),
        "kubernetes_version": version,
    }


def _job_context(w: Workload, version: str) -> dict[str, Any]:
    return {
        "backoff_limit": w.backoff_limit,
        "parallelism": w.parallelism,
        "completions": w.completions,
        # Indexed when completions are given: each index is one shard, and the pod that
        # replaces a preempted one resumes the same shard (JOB_COMPLETION_INDEX) from its
        # checkpoint instead of starting an arbitrary one.
        "completion_mode": "Indexed" if w.completions is not None else None,
        "pod_replacement_policy": (
            "Failed" if version_tuple(version) >= POD_REPLACEMENT_SINCE else None),
        "handler_exit_code": HANDLER_EXIT_CODE,
        "empty_pod_conditions": version_tuple(version) < CONDITIONS_OPTIONAL_SINCE,
    }


def _pod_context(w: Workload, spec: Spec, profile: Profile, wrapper: str) -> dict[str, Any]:
    node_selector = dict(w.node_selector)
    affinity = None
    tolerations = [dict(t) for t in w.tolerations]
    if w.compute == "preemptible":
        node_selector = {**profile.preemptible_selector, **node_selector}
        taint = _taint_toleration(profile)
        if taint is not None and taint not in tolerations:
            tolerations.append(taint)
    else:
        affinity = {"key": profile.label_key, "operator": "NotIn",
                    "values": [profile.label_value]}
    volumes: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    if spec.shared_volume is not None:
        volumes.append({"name": SHARED_VOLUME_NAME,
                        "claimName": spec.shared_volume.claim_name,
                        "mountPath": spec.shared_volume.mount_path})
        mounts.append({"name": SHARED_VOLUME_NAME, "mountPath": spec.shared_volume.mount_path})
    for volume in w.volumes:
        volumes.append({"name": volume.name, volume.source: volume.value})
        mounts.append(_mount(volume))
    return {
        "node_selector": node_selector,
        "required_affinity": affinity,
        "grace_period_seconds": w.checkpoint.grace_period_seconds if w.checkpoint else None,
        "service_account_name": w.service_account_name,
        "tolerations": tolerations,
        "volumes": volumes,
        "container": _container_context(w, wrapper, mounts),
    }


def _mount(volume: Volume) -> dict[str, Any]:
    mount: dict[str, Any] = {"name": volume.name, "mountPath": volume.mount_path}
    if volume.read_only:
        mount["readOnly"] = True
    if volume.sub_path is not None:
        mount["subPath"] = volume.sub_path
    return mount


def _taint_toleration(profile: Profile) -> dict[str, Any] | None:
    """The toleration preemptible pods need where the provider taints its nodes (AKS)."""
    taint = profile.taint
    if taint is None:
        return None
    if taint.value is None:
        return {"key": taint.key, "operator": "Exists", "effect": taint.effect}
    return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}


def _container_context(w: Workload, wrapper: str, mounts: list[dict[str, Any]]
                       ) -> dict[str, Any]:
    command = list(w.command) if w.command is not None else None
    args = list(w.args) if w.args else None
    pre_stop = None
    ckpt = w.checkpoint
    if ckpt is not None and ckpt.trigger == "sigterm" and w.main_argv is not None:
        # /bin/sh -c WRAPPER $0 N CHECKPOINT_ARGV... and, as args, MAIN_ARGV...
        command = ["/bin/sh", "-c", wrapper, WRAPPER_NAME, str(len(ckpt.command)),
                   *ckpt.command]
        args = list(w.main_argv)
    elif ckpt is not None and ckpt.trigger == "preStop":
        pre_stop = list(ckpt.command)
    env = [{"name": k, "value": v} for k, v in w.env.items()]
    if ckpt is not None and ckpt.dir is not None:
        env.append({"name": "CHECKPOINT_DIR", "value": posixpath.normpath(ckpt.dir)})
    limits: dict[str, str | int] = dict(w.resources.get("limits", {}))
    if w.gpus:
        limits["nvidia.com/gpu"] = w.gpus
    resources: dict[str, Any] = {}
    if w.resources.get("requests"):
        resources["requests"] = dict(w.resources["requests"])
    if limits:
        resources["limits"] = limits
    return {
        "name": w.name,
        "image": w.image,
        "command": command,
        "args": args,
        "env": env,
        "ports": [{"name": f"port-{p}", "containerPort": p} for p in w.ports],
        "resources": resources,
        "pre_stop": pre_stop,
        "volume_mounts": mounts,
    }


def read_spec(path: str) -> tuple[str, str]:
    """(text, display name) of a spec file, ``-`` for stdin; InputError when unreadable."""
    import sys

    from pmanifest.loader import decode

    name = "<stdin>" if path == "-" else path
    try:
        raw = sys.stdin.buffer.read() if path == "-" else FsPath(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read the spec: {exc.strerror or exc}; check the path",
                         name) from None
    try:
        return decode(raw), name
    except YamlProblem as problem:
        raise SpecError(f"{problem.message}; save the spec as UTF-8 text", name, problem.line,
                        problem.column) from None
