"""What makes a lint run a gate that cannot pass by accident: a run that checked no Kubernetes
object is an error (exit 2) unless ``--allow-empty`` says that is expected.

A wrong path, a folder of JSON, a spec file or a directory the config excludes would otherwise
exit 0 with nothing printed, and a CI job or a pre-commit hook would pass having checked
nothing. The message names what was read and why nothing in it counted.
"""

from __future__ import annotations

SHOWN = 3  # named paths spelled out in the message; the rest are counted


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _what(named: list[str]) -> str:
    if len(named) <= SHOWN:
        return ", ".join(named)
    return f"{', '.join(named[:SHOWN])} and {len(named) - SHOWN} more"


def empty_run(named: list[str], files: int, fragments: int, excluded: int,
              by: str = "the config's exclude:", left: str = "", templates: int = 0) -> str:
    """The one-line error of a run that found no Kubernetes object (``named``: the paths given,
    stdin by its file name; ``by``: what excluded the ``excluded`` ones; ``left``: the YAML
    files its directory walks left out, by reason; ``templates``: files read that are
    unrendered templates)."""
    if files and templates == files:
        what = "an unrendered template" if files == 1 else "all unrendered templates"
        found = f"{_plural(files, 'file')} read, {what}: lint the rendered output"
    elif files:
        found = f"{_plural(files, 'file')} read, no object with apiVersion and kind in it"
        if templates:
            found += f" ({templates} of them unrendered templates)"
        if fragments:
            found += f" but {_plural(fragments, 'patch fragment')} (PM007)"
        if left:
            found += f"; YAML files not walked: {left}"
    elif excluded:
        found = f"{_plural(excluded, 'named path')} excluded by {by}"
    elif left:
        found = f"no *.yaml or *.yml file walked: {left}; name them to lint them"
    else:
        found = "no *.yaml or *.yml file in it"
    return (f"no Kubernetes object found in {_what(named)} ({found}): nothing was checked; "
            "name the manifests to lint, or pass --allow-empty where none is expected")


def foreign_note(documents: int, files: int) -> str:
    """The line after the summary that counts the YAML documents skipped as no Kubernetes
    object (no apiVersion and kind: CloudFormation, CI or tool configuration)."""
    where = "1 file" if files == 1 else f"{files} files"
    return (f"pmanifest: {_plural(documents, 'YAML document')} in {where} skipped: not "
            "Kubernetes objects (no apiVersion and kind)")

