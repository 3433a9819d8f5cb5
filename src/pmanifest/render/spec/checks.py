"""Semantic checks on schema-valid spec data (what a JSON Schema cannot say: the
preemptible contract, checkpoints on the shared volume, unique names), and the construction
of the model."""

from __future__ import annotations

import posixpath
from typing import Any

from pmanifest.errors import PmanifestError
from pmanifest.kube.profile import Profile
from pmanifest.loader.positions import Path, Positions, dotted
from pmanifest.render.spec.distributed import parse_distributed
from pmanifest.render.spec.model import (
    DEFAULT_MARGIN_SECONDS,
    DEFAULT_REPLICAS,
    ENV_NAME,
    LABEL_NAME,
    LABEL_PREFIX,
    LABEL_VALUE,
    RESERVED_LABELS,
    SHARED_VOLUME_NAME,
    VOLUME_SOURCES,
    Checkpoint,
    SharedVolume,
    Spec,
    Volume,
    WorkloadSpec,
    spec_error,
)
from pmanifest.render.spec.pod import check_qos, overlays_of, spread_of
from pmanifest.render.spec.resources import check_requests
from pmanifest.render.spec.runtime import EnvRef
from pmanifest.render.spec.runtime_checks import (
    backoff_limit,
    check_entrypoint,
    check_shared_runtime,
    env_values,
    runtime,
)


class Checker:
    """Semantic checks on schema-valid data, and the construction of the model."""

    def __init__(self, data: dict[str, Any], positions: Positions, file: str,
                 profile: Profile) -> None:
        self.data = data
        self.positions = positions
        self.file = file
        self.profile = profile

    def fail(self, path: Path, message: str, *, value: bool = True) -> PmanifestError:
        return spec_error(self.file, self.positions, path, message, value=value)

    def spec(self) -> Spec:
        cluster = self.data.get("cluster", {})
        volume = cluster.get("sharedVolume")
        shared = None
        if volume is not None:
            mount = posixpath.normpath(volume["mountPath"])
            if mount == "/":
                raise self.fail(("cluster", "sharedVolume", "mountPath"),
                                "the shared volume cannot be mounted at /; use a directory "
                                "such as /mnt/shared")
            shared = SharedVolume(volume["claimName"], mount)
        defaults = self.data.get("defaults", {})
        self.check_shared(defaults, ("defaults",))
        default_volumes = self.volumes(("defaults",), defaults, shared)
        workloads = []
        seen: dict[str, int] = {}
        for i, raw in enumerate(self.data["workloads"]):
            workload = self.workload(i, raw, defaults, shared, default_volumes)
            if workload.name in seen:
                raise self.fail(("workloads", i, "name"),
                                f"workload name {workload.name!r} is already used by "
                                f"workloads[{seen[workload.name]}]; give each workload its "
                                "own name")
            seen[workload.name] = i
            workloads.append(workload)
        return Spec(self.file, cluster.get("kubernetesVersion"), shared, tuple(workloads),
                    self.positions, self.profile)

    def check_shared(self, raw: dict[str, Any], path: Path) -> None:
        for key, value in raw.get("labels", {}).items():
            self.check_label((*path, "labels", key), key, value)
        for key in raw.get("env", {}):
            if not ENV_NAME.match(key):
                raise self.fail((*path, "env", key), f"environment variable name {key!r} is "
                                "not valid; use letters, digits, '_', '-' and '.', not "
                                "starting with a digit", value=False)
        label = self.profile.label_key
        if label in raw.get("nodeSelector", {}):
            raise self.fail((*path, "nodeSelector", label), f"nodeSelector must not set "
                            f"{label!r}; use compute: preemptible or compute: standard",
                            value=False)
        check_shared_runtime(self, raw, path)
        for key, value in raw.get("podTemplate", {}).get("metadata", {}).get("labels",
                                                                              {}).items():
            self.check_label((*path, "podTemplate", "metadata", "labels", key), key, value)

    def check_label(self, path: Path, key: str, value: str) -> None:
        if key in RESERVED_LABELS:
            raise self.fail(path, f"label {key!r} is set by pmanifest; remove it", value=False)
        prefix, _, name = key.rpartition("/")
        if (len(name) > 63 or not LABEL_NAME.match(name)
                or (prefix and (len(prefix) > 253 or not LABEL_PREFIX.match(prefix)))):
            raise self.fail(path, f"label key {key!r} is not a valid Kubernetes label key; use "
                            "[prefix/]name with a DNS prefix and a name of at most 63 "
                            "alphanumerics, '-', '_' or '.'", value=False)
        if len(value) > 63 or not LABEL_VALUE.match(value):
            raise self.fail(path, f"label value {value!r} is not a valid Kubernetes label "
                            "value; use at most 63 alphanumerics, '-', '_' or '.', starting "
                            "and ending with an alphanumeric")

    def workload(self, i: int, raw: dict[str, Any], defaults: dict[str, Any],
                 shared: SharedVolume | None, default_volumes: list[tuple[Path, Volume]]
                 ) -> WorkloadSpec:
        path: Path = ("workloads", i)
        self.check_shared(raw, path)
        volumes = self.unique_volumes([*default_volumes, *self.volumes(path, raw, shared)])
        role = raw.get("role", "worker")
        compute = raw.get("compute", "preemptible" if role == "worker" else "standard")
        if role != "worker" and compute == "preemptible":
            raise self.fail((*path, "compute"), f"{role} workloads cannot run on preemptible "
                            "compute (compute: preemptible); remove it or use role: worker")
        self.check_role_fields(path, raw, role)
        image = raw.get("image", defaults.get("image"))
        if image is None:
            raise self.fail(path, f"workload {raw['name']!r} has no image; add image: "
                            "<registry/repository:tag> (or set it in defaults)", value=False)
        check_entrypoint(self, path, raw, role, image)
        command = self.main_command(path, raw, role)
        checkpoint = self.checkpoint(path, raw, compute, shared, command)
        env = {**_env(defaults.get("env", {})), **_env(raw.get("env", {}))}
        if checkpoint is not None and checkpoint.dir is not None and "CHECKPOINT_DIR" in env:
            env_path = (*path, "env", "CHECKPOINT_DIR")
            raise self.fail(env_path if "CHECKPOINT_DIR" in raw.get("env", {}) else path,
                            "CHECKPOINT_DIR is set from checkpoint.dir; remove it from env",
                            value=False)
        distributed = None
        if "distributed" in raw:
            distributed = parse_distributed(raw["distributed"], raw, path, command, self.fail)
        check_requests(self, path, raw)
        resources = {k: dict(v) for k, v in raw.get("resources", {}).items()}
        replicas = raw.get("replicas", DEFAULT_REPLICAS.get(role, 1))
        return WorkloadSpec(
            number=i, name=raw["name"], role=role, compute=compute, image=image,
            command=command, args=_argv(raw.get("args", [])), env=env,
            gpus=raw.get("gpus", 0), parallelism=raw.get("parallelism"),
            completions=raw.get("completions"),
            replicas=replicas,
            ports=tuple(raw.get("ports", [])), checkpoint=checkpoint,
            namespace=raw.get("namespace", defaults.get("namespace")),
            labels={**defaults.get("labels", {}), **raw.get("labels", {})},
            node_selector={**defaults.get("nodeSelector", {}), **raw.get("nodeSelector", {})},
            tolerations=tuple(raw.get("tolerations", defaults.get("tolerations", []))),
            service_account_name=raw.get("serviceAccountName",
                                         defaults.get("serviceAccountName")),
            resources=resources,
            backoff_limit=backoff_limit(raw),
            volumes=volumes,
            active_deadline_seconds=raw.get("activeDeadlineSeconds"),
            distributed=distributed,
            runtime=runtime(self, path, raw, defaults, role, replicas),
            qos=check_qos(self, path, raw),
            spread=spread_of(self, path, raw, role, replicas),
            overlays=overlays_of(path, raw, defaults),
        )

    def main_command(self, path: Path, raw: dict[str, Any], role: str
                     ) -> tuple[str, ...] | None:
        """The main argv; None (the image's entrypoint) only where no supervisor starts it."""
        if "command" in raw:
            return _argv(raw["command"])
        if role == "worker":
            raise self.fail(path, f"worker {raw['name']!r} has no command: workers run under "
                            "pmanifest's termination supervisor, which starts the main "
                            "itself, and the image's ENTRYPOINT cannot be known from the "
                            "spec; add the image's entrypoint and arguments, e.g. command: "
                            "[python, train.py] and args: [--resume]", value=False)
        return None

    def volumes(self, path: Path, raw: dict[str, Any], shared: SharedVolume | None
                ) -> list[tuple[Path, Volume]]:
        """The extra volumes of ``raw`` (defaults or one workload), each with its path."""
        out = []
        for j, item in enumerate(raw.get("volumes", [])):
            vpath = (*path, "volumes", j)
            out.append((vpath, self.volume(vpath, item, shared)))
        return out

    def volume(self, path: Path, item: dict[str, Any], shared: SharedVolume | None) -> Volume:
        name = item["name"]
        if name == SHARED_VOLUME_NAME:
            raise self.fail((*path, "name"), f"volume name {name!r} is taken by the shared "
                            "volume; choose another name")
        mount = item["mountPath"]
        if ".." in mount.split("/"):
            raise self.fail((*path, "mountPath"), f"mountPath {mount!r} contains '..'; give "
                            "the absolute path without it")
        normal = _absolute(mount)
        if normal == "/":
            raise self.fail((*path, "mountPath"), "a volume cannot be mounted at /; use a "
                            "directory such as /mnt/data")
        if shared is not None and _inside(normal, _absolute(shared.mount_path)):
            where = ("is the shared volume's mountPath" if normal == _absolute(
                shared.mount_path) else f"is inside the shared volume (mounted at "
                f"{shared.mount_path})")
            raise self.fail((*path, "mountPath"), f"mountPath {mount!r} {where}, which it "
                            "would hide and whose writes it would catch; mount it outside "
                            f"{shared.mount_path}")
        sub_path = item.get("subPath")
        if sub_path is not None and (sub_path.startswith("/") or ".." in sub_path.split("/")):
            raise self.fail((*path, "subPath"), f"subPath {sub_path!r} must be a relative "
                            "path inside the volume, without '..'; e.g. subPath: datasets")
        source = next(key for key in VOLUME_SOURCES if key in item)  # the schema checked one
        value = dict(item[source]) if source == "emptyDir" else item[source]
        return Volume(name, normal, source, value, item.get("readOnly", False), sub_path)

    def unique_volumes(self, volumes: list[tuple[Path, Volume]]) -> tuple[Volume, ...]:
        """The merged list of a workload, refused where a name or mountPath repeats."""
        names: dict[str, Path] = {}
        mounts: dict[str, Path] = {}
        for path, volume in volumes:
            if volume.name in names:
                raise self.fail((*path, "name"), f"volume name {volume.name!r} is already "
                                f"used by {dotted(names[volume.name])}; give each volume its "
                                "own name")
            if volume.mount_path in mounts:
                raise self.fail((*path, "mountPath"), f"mountPath {volume.mount_path!r} is "
                                f"already used by {dotted(mounts[volume.mount_path])}; mount "
                                "each volume at its own path")
            names[volume.name] = path
            mounts[volume.mount_path] = path
        return tuple(volume for _, volume in volumes)

    def check_role_fields(self, path: Path, raw: dict[str, Any], role: str) -> None:
        only = {"parallelism": "worker", "completions": "worker", "backoffLimit": "worker",
                "activeDeadlineSeconds": "worker", "replicas": "coordinator or serving"}
        for key, roles in only.items():
            if key in raw and role not in roles:
                raise self.fail((*path, key), f"{key} applies to {roles} workloads, not "
                                f"{role}; remove it or change role", value=False)
        if raw.get("ports") and role != "worker" and not raw["name"][0].isalpha():
            raise self.fail((*path, "name"), f"name {raw['name']!r} must start with a letter "
                            "because it also names the Service (DNS-1035); rename it")

    def checkpoint(self, path: Path, raw: dict[str, Any], compute: str,
                   shared: SharedVolume | None, command: tuple[str, ...] | None
                   ) -> Checkpoint | None:
        body = raw.get("checkpoint")
        if body is None:
            return None
        cpath = (*path, "checkpoint")
        cap = self.profile.grace_period_cap
        grace = body.get("gracePeriodSeconds", cap)
        if compute == "preemptible" and grace > cap:
            raise self.fail((*cpath, "gracePeriodSeconds"), f"gracePeriodSeconds {grace} is "
                            f"above the {cap} s cap of preemptible nodes (the node is removed "
                            f"after {self.profile.drain_window_seconds} s); use at most {cap}")
        if body["trigger"] == "sigterm" and command is None:
            raise self.fail((*cpath, "trigger"), "trigger: sigterm wraps the main command, "
                            "but the workload has no command; add command: [...] or use "
                            "trigger: preStop")
        mode = self.checkpoint_mode(cpath, body)
        self.check_timing(cpath, body, grace, cap if compute == "preemptible" else None)
        ckpt_dir = body.get("dir")
        if ckpt_dir is not None:
            self.check_dir((*cpath, "dir"), ckpt_dir, shared)
        cmd = body.get("command", [])
        argv = ("/bin/sh", "-c", cmd) if isinstance(cmd, str) else _argv(cmd)
        return Checkpoint(argv, body["trigger"], grace, ckpt_dir, mode,
                          body.get("marginSeconds", DEFAULT_MARGIN_SECONDS),
                          body.get("expectedSeconds"))

    def checkpoint_mode(self, cpath: Path, body: dict[str, Any]) -> str | None:
        """The mode (None with trigger preStop), refused where it and the command disagree."""
        mode = body.get("mode")
        has_command = "command" in body
        if body["trigger"] == "preStop":
            if mode is not None:
                raise self.fail((*cpath, "mode"), "mode applies to trigger: sigterm; with "
                                "trigger: preStop the hook runs checkpoint.command and the "
                                "supervisor then stops the main, so remove mode", value=False)
            if not has_command:
                raise self.fail(cpath, "trigger: preStop runs checkpoint.command as the "
                                "hook, and there is none; add command: [...] under "
                                "checkpoint", value=False)
            return None
        if mode is None:
            return "command" if has_command else "signal"
        if mode == "command" and not has_command:
            raise self.fail((*cpath, "mode"), "mode: command runs checkpoint.command on "
                            "SIGTERM, and there is none; add command: [...] under checkpoint, "
                            "or use mode: signal if the main's own TERM handler checkpoints")
        if mode == "signal" and has_command:
            raise self.fail((*cpath, "command"), "mode: signal forwards SIGTERM to the main, "
                            "whose own handler checkpoints, so checkpoint.command would never "
                            "run; remove command or use mode: command", value=False)
        mode_value: str = mode
        return mode_value

    def check_timing(self, cpath: Path, body: dict[str, Any], grace: int,
                     cap: int | None = None) -> None:
        """The margin leaves the supervisor time, and the declared checkpoint fits; ``cap``:
        the profile's grace period cap on preemptible compute (None: no cap)."""
        margin = body.get("marginSeconds", DEFAULT_MARGIN_SECONDS)
        where = "marginSeconds" if "marginSeconds" in body else "gracePeriodSeconds"
        raise_grace = "" if cap is not None and grace >= cap else " or raise gracePeriodSeconds"
        if grace - margin < 1:
            raise self.fail((*cpath, where) if where in body else cpath,
                            f"marginSeconds {margin} leaves no time before the supervisor's "
                            f"deadline (gracePeriodSeconds {grace} - marginSeconds {margin} "
                            f"< 1 s); set marginSeconds to at most {grace - 1}{raise_grace}",
                            value=where in body)
        expected = body.get("expectedSeconds")
        if expected is None or expected + margin <= grace:
            return
        hook = body["trigger"] == "preStop"
        what = "the preStop hook" if hook else "the checkpoint"
        if expected > grace:
            problem = (f"{what} takes up to {expected} s (expectedSeconds), more than the "
                       f"{grace} s grace period: the kubelet SIGKILLs the pod before it ends")
        else:
            then = ("the main then gets marginSeconds to stop" if hook else
                    f"the supervisor stops everything {grace - margin} s after SIGTERM")
            problem = (f"{what} takes up to {expected} s (expectedSeconds) and {then}: "
                       f"{expected} + {margin} s exceeds gracePeriodSeconds {grace}")
        raise self.fail((*cpath, "expectedSeconds"),
                        f"{problem}; {self.timing_advice(what, expected, margin, grace, cap)}")

    def timing_advice(self, what: str, expected: int, margin: int, grace: int,
                      cap: int | None) -> str:
        """What makes ``expected + margin <= grace`` true, within the cap."""
        need = expected + margin
        if cap is None or need <= cap:
            if expected > grace:
                return "raise gracePeriodSeconds or make the checkpoint faster"
            return f"raise gracePeriodSeconds to at least {need} or lower marginSeconds"
        window = (f"{what} cannot fit the drain window: preemptible nodes allow at most {cap} s "
                  f"of grace (the node is removed after {self.profile.drain_window_seconds} s), "
                  f"leaving {cap - margin} s with marginSeconds {margin}")
        if cap - expected >= 1:  # a smaller margin suffices
            raise_grace = f"gracePeriodSeconds {cap} and " if grace < cap else ""
            return (f"{window}; make the checkpoint faster (at most {cap - margin} s) or set "
                    f"{raise_grace}marginSeconds {cap - expected}")
        return f"{window}; make the checkpoint faster (at most {cap - margin} s)"

    def check_dir(self, path: Path, ckpt_dir: str, shared: SharedVolume | None) -> None:
        if shared is None:
            raise self.fail(path, f"checkpoint dir {ckpt_dir!r} needs a shared volume, and "
                            "the spec has none; add cluster.sharedVolume {claimName, "
                            "mountPath} and put the dir under its mountPath")
        normal = posixpath.normpath(ckpt_dir)
        inside = ckpt_dir.startswith("/") and (
            normal == shared.mount_path or normal.startswith(shared.mount_path + "/"))
        if not inside:
            raise self.fail(path, f"checkpoint dir {ckpt_dir!r} is not on the shared volume "
                            f"(mounted at {shared.mount_path}); checkpoints elsewhere are lost "
                            f"with the node, so use a path under {shared.mount_path}/")


def _absolute(path: str) -> str:
    """``path`` normalised, with one leading slash (normpath keeps a leading ``//``)."""
    return "/" + posixpath.normpath(path).lstrip("/")


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _argv(items: list[str | int]) -> tuple[str, ...]:
    return tuple(str(item) for item in items)


def _env(raw: dict[str, Any]) -> dict[str, str | EnvRef]:
    return env_values(raw)

