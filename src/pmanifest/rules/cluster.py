"""Cluster request rules (``applies="cluster"``), run by ``pmanifest cluster check`` on a
create or update request or a cluster read (Together's preemptible compute). Each hit points at the
value of the field it is about (``Hit.pos``: positions come with the request, from a body or a
command line), or at the start of the request for a missing field.

- PM501: the preemptible target (``num_preemptible_gpus``; ``desired_preemptible_gpus`` in a
  read) is not a whole, non-negative multiple of 8;
- PM502: a create request asks for preemptible GPUs without ``project_id`` (``--project`` or
  ``TOGETHER_PROJECT_ID=`` on a command line). Not checked on an update, whose cluster may
  already have its project (the documented update example passes none), nor on a read;
- PM503: no standard node: ``num_gpus`` missing from a create, or below 1 anywhere;
- PM504: preemptible GPUs on a SLURM cluster (preemptible compute is for Kubernetes clusters);
- PM505 (info): a read whose ``allocated_preemptible_gpus`` is far below its target, i.e. less
  than half of ``desired_preemptible_gpus``: normal while nodes fill in after a create or a
  scale-up, a sign of tight capacity when it lasts;
- PM506: a field the cluster API does not document (``nmu_preemptible_gpus``), or a flag the
  documented ``tg beta clusters`` command lines do not have (``--num-preemptable-gpus``): a
  typo that leaves the intended field unset and unchecked. Bodies may hold every documented
  field of a request or a read (``KNOWN_FIELDS``); command lines the documented flags
  (``COMMAND_FIELDS``, and ``--non-interactive``/``--json``). At the key or flag, with the
  closest known name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pmanifest.rules import ClusterContext, Hit, rule
from pmanifest.suggest import close_match

if TYPE_CHECKING:  # imported where a check runs: lint registers these but never runs them
    from pmanifest.cluster.request import ClusterRequest

MULTIPLE = 8  # documented: num_preemptible_gpus must be a multiple of 8
FAR_BELOW = 2  # PM505: allocated under half (1/FAR_BELOW) the target (integers: any size)
# PM506: the fields of the documented `tg beta clusters create|update` flags (the documented
# commands; --project is project_id). Boolean flags are not fields.
COMMAND_FIELDS = frozenset({
    "name", "region", "gpu_type", "cluster_type", "num_gpus", "billing_type",
    "nvidia_driver_version", "cuda_version", "num_preemptible_gpus", "project_id"})


def target_field(request: ClusterRequest) -> str:
    from pmanifest.cluster.request import READ

    return "desired_preemptible_gpus" if request.kind == READ else "num_preemptible_gpus"


def _hit(request: ClusterRequest, field: str | None, message: str) -> Hit:
    """A hit at the value of ``field``, or at the start of the request."""
    found = request.fields.get(field) if field is not None else None
    pos = found.pos if found is not None else request.start
    return Hit((field,) if found is not None and field is not None else (), message, pos=pos,
               value=True)


def _name(request: ClusterRequest, field: str) -> str:
    """A field as the request spells it: ``num_gpus`` in a body, ``--num-gpus`` in a command."""
    if request.form != "command":
        return field
    return "--project" if field == "project_id" else "--" + field.replace("_", "-")


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _target(request: ClusterRequest) -> int | None:
    return _whole(request.get(target_field(request)))


def _describe(value: Any) -> str:
    """A value as JSON would show it: 12, "12", null, true, [8]."""
    return json.dumps(value, ensure_ascii=False, default=str)


@rule("PM501")
def not_multiple_of_8(ctx: ClusterContext) -> Iterator[Hit]:
    request = ctx.request
    field = target_field(request)
    if field not in request.fields:
        return
    value = request.get(field)
    count = _whole(value)
    if count is not None and count >= 0 and count % MULTIPLE == 0:
        return
    if count is None:
        what = f"must be a whole number of GPUs (a multiple of {MULTIPLE}), not {_describe(value)}"
    elif count < 0:
        what = f"{count} is negative; use 0 or a multiple of {MULTIPLE}"
    else:
        low = count - count % MULTIPLE
        options = f"{low} or {low + MULTIPLE}" if low else f"{MULTIPLE}"
        what = (f"{count} is not a multiple of {MULTIPLE} (preemptible capacity comes in whole "
                f"{MULTIPLE}-GPU nodes); use {options}")
    yield _hit(request, field, f"{_name(request, field)} {what}")


@rule("PM502")
def no_project(ctx: ClusterContext) -> Iterator[Hit]:
    from pmanifest.cluster.request import CREATE

    request = ctx.request
    target = _target(request)
    if request.kind != CREATE or target is None or target <= 0:
        return
    project = request.get("project_id")
    if isinstance(project, str) and project.strip():
        return
    how = ("pass --project (or set TOGETHER_PROJECT_ID)" if request.form == "command"
           else "add project_id")
    yield _hit(request, target_field(request),
               f"{_name(request, target_field(request))} {target} needs a project: {how}")


@rule("PM503")
def no_standard_node(ctx: ClusterContext) -> Iterator[Hit]:
    from pmanifest.cluster.request import CREATE

    request = ctx.request
    if "num_gpus" not in request.fields:
        if request.kind == CREATE:  # an update keeps the current standard count
            name = _name(request, "num_gpus")
            yield _hit(request, None, f"no {name}: every cluster needs at least one standard "
                       f"node; set {name} (8 GPUs a node)")
        return
    value = request.get("num_gpus")
    count = _whole(value)
    if count is None or count < 1:
        yield _hit(request, "num_gpus", f"{_name(request, 'num_gpus')} {_describe(value)}: "
                   "every cluster needs at least one standard node (preemptible nodes are "
                   "added to it, never alone)")


@rule("PM504")
def slurm_with_preemptible(ctx: ClusterContext) -> Iterator[Hit]:
    request = ctx.request
    kind = request.get("cluster_type")
    target = _target(request)
    if isinstance(kind, str) and kind.upper() == "SLURM" and target is not None and target > 0:
        yield _hit(request, target_field(request),
                   f"{_name(request, target_field(request))} {target} on a SLURM cluster: "
                   "preemptible compute is for Kubernetes clusters only (Slurm is not "
                   "supported yet)")


@rule("PM505")
def allocation_far_below(ctx: ClusterContext) -> Iterator[Hit]:
    from pmanifest.cluster.request import READ

    request = ctx.request
    if request.kind != READ:
        return
    desired = _whole(request.get("desired_preemptible_gpus"))
    allocated = _whole(request.get("allocated_preemptible_gpus"))
    if desired is None or allocated is None or desired <= 0 or allocated * FAR_BELOW >= desired:
        return
    yield _hit(request, "allocated_preemptible_gpus",
               f"allocated_preemptible_gpus {allocated} is less than half the target of "
               f"{desired}: preemptible nodes are still filling in, or capacity is tight; pods "
               "pinned to preemptible nodes wait for it")


@rule("PM506")
def unknown_field(ctx: ClusterContext) -> Iterator[Hit]:
    from pmanifest.cluster.request import KNOWN_FIELDS

    request = ctx.request
    command = request.form == "command"
    known = COMMAND_FIELDS if command else KNOWN_FIELDS
    what = "flag" if command else "field"
    names = sorted(_name(request, field) for field in known)
    for field, value in request.fields.items():
        if field in known:
            continue
        name = _name(request, field)
        near = close_match(name, names)
        fix = (f"did you mean {near}?" if near else
               f"remove it (known {what}s: {', '.join(names)})")
        yield Hit((field,), f"unknown {what} {name}: the cluster API documents no such {what}, "
                  f"so its value is not checked and not what the cluster gets; {fix}",
                  pos=value.key)
