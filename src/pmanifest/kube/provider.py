"""Which provider an input is written for, when no profile is given: the one whose
preemptible labels it uses most (:func:`infer`), and, in an input that mixes providers, the
one each document names (:func:`document_profile`)."""

from __future__ import annotations

from typing import Any, NamedTuple

from pmanifest.kube.profile import DEFAULT_PROFILE, Profile, get_profile


class Inferred(NamedTuple):
    """The profile a run infers from the input's labels, and why (for the summary)."""

    profile: Profile
    reason: str  # "inferred from cloud.google.com/gke-spot in 3 objects", ...
    others: tuple[Profile, ...] = ()  # other providers whose preemptible labels it uses


def infer(used: dict[str, int], candidates: list[Profile]) -> Inferred:
    """The provider whose preemptible labels the input uses in the most documents (``used``:
    label key or prefix -> documents); when it uses none, the provider whose other labels
    (``providerLabels``) it uses most. The first candidate wins a tie and a key two share;
    the default profile when no label tells."""
    for tier in (0, 1):
        owner: dict[str, Profile] = {}
        for profile in candidates:
            for key in (profile.label_key,) if tier == 0 else profile.provider_labels:
                owner.setdefault(key, profile)
        score: dict[str, int] = {}
        for key, count in used.items():
            if key in owner and count:
                score[owner[key].name] = score.get(owner[key].name, 0) + count
        if score:
            return _inferred(used, candidates, owner, score, tier)
    return Inferred(get_profile(DEFAULT_PROFILE), "the default: no provider label found")


def _inferred(used: dict[str, int], candidates: list[Profile], owner: dict[str, Profile],
              score: dict[str, int], tier: int) -> Inferred:
    order = [p.name for p in candidates]
    best = max(score, key=lambda name: (score[name], -order.index(name)))
    mine = [k for k in owner if owner[k].name == best and used.get(k)]
    others = [k for k in owner if used.get(k) and owner[k].name != best]
    reason = "inferred from " + _said(mine, used)
    if tier:
        reason += " (no preemptible label found)"
    return Inferred(next(p for p in candidates if p.name == best),
                    reason + _also(others, owner, used, tier),
                    tuple(dict.fromkeys(owner[k] for k in others)) if tier == 0 else ())


def _also(others: list[str], owner: dict[str, Profile], used: dict[str, int], tier: int) -> str:
    """What the reason adds of other providers' labels: under whose profile the documents
    that name a preemptible one are judged."""
    if not others:
        return ""
    if tier == 0:
        names = ", ".join(dict.fromkeys(owner[k].name for k in others))
        return f"; {_said(others, used)}, judged under {names}"
    return f"; the input also uses {_said(others, used)}: the most used wins"


def _said(keys: list[str], used: dict[str, int]) -> str:
    """``karpenter.sh/capacity-type in 3 objects and ...`` (a prefix as ``cloud.google.com/*``)."""
    return " and ".join(f"{k}{'*' if k.endswith('/') else ''} in {used[k]} "
                        f"object{'' if used[k] == 1 else 's'}" for k in keys)


def document_profile(data: Any, profile: Profile, others: tuple[Profile, ...]) -> Profile:
    """The profile of one document of a mixed input: the first of ``others`` whose
    preemptible label the document names (as a key or a value anywhere), else ``profile``."""
    wanted = {p.label_key: p for p in reversed(others)}
    stack = [data]
    found: Profile | None = None
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            found = next((wanted[k] for k in value if isinstance(k, str) and k in wanted), None)
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and value in wanted:
            found = wanted[value]
        if found is not None:
            return found
    return profile
