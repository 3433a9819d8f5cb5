"""The profile a lint run uses: the one given (``--profile``, the config's ``profile:``), or
the one the input's preemptible labels point to; either way with what the input tells of its
capacity (its on-demand ComputeClasses), and the serving runtimes it defines. All come from one
pass over the input's bytes (:mod:`pmanifest.lint.inputscan`).
"""

from __future__ import annotations

from typing import NamedTuple

from pmanifest.kube.profile import Profile, get_profile, profile_names
from pmanifest.kube.provider import infer
from pmanifest.lint.engine import LintOptions
from pmanifest.lint.inputscan import scan_inputs
from pmanifest.lint.sources import FileRef, Problem, Source


class Chosen(NamedTuple):
    """The profile of a run and why: what the summary says of it."""

    name: str
    why: str  # "--profile", "the config's profile:", "inferred from ...", "the default: ..."
    inferred: bool = False


def informed(options: LintOptions, items: list[FileRef | Source | Problem],
             given: str | None, custom: list[Profile]) -> tuple[LintOptions, Chosen]:
    """``options`` with the run's profile: ``given`` (what said so: "--profile", "the
    config's profile:"; None to infer it among the built-in profiles, then ``custom``), and
    the input's on-demand ComputeClasses as never-preemptible capacity."""
    profile = options.profile
    candidates = [] if given is not None else [*map(get_profile, profile_names()), *custom]
    facts = scan_inputs(items, [key for p in candidates for key in p.evidence])
    chosen = Chosen(profile.name, given) if given is not None else None
    others: tuple[Profile, ...] = ()
    if chosen is None:
        found = infer(dict(facts.labels), candidates)
        profile, chosen = found.profile, Chosen(found.profile.name, found.reason, True)
        others = tuple(p.with_standard_classes(facts.standard_classes) for p in found.others)
    profile = profile.with_standard_classes(facts.standard_classes)
    return options._replace(profile_name=profile.name, resolved=profile, others=others,
                            runtimes=facts.runtimes), chosen
