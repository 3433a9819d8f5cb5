"""PM006: a shell script pmanifest did not read to the end (see policies/rules-engine.yaml).

The shell analysis gives up on scripts past its budget (functions that call each other into an
exponential number of steps) or its nesting bound; their facts are empty, so the shell rules
stay silent on them. This rule says so instead of letting the silence pass for a clean bill.
The scripts are those the checkpoint rules read (:func:`pmanifest.shell.pod.shells_of`)."""

from __future__ import annotations

from collections.abc import Iterator

from pmanifest.loader.positions import Path
from pmanifest.rules import Context, Hit, rule
from pmanifest.shell import ScriptFacts, analyse
from pmanifest.shell.pod import shells_of


@rule("PM006")
def script_not_analysed(ctx: Context) -> Iterator[Hit]:
    for shell in shells_of(ctx.workload):
        scripts: list[tuple[str, Path, ScriptFacts]] = []
        if shell.script_path is not None:
            scripts.append(("script", shell.script_path, shell.facts))
        prestop = shell.prestop
        if prestop is not None and prestop.script is not None:
            path, text = prestop.script
            scripts.append(("preStop hook", (*shell.container.path, *path), analyse(text)))
        for what, where, facts in scripts:
            if facts.opaque:
                yield Hit(where,
                          f"the {what} of container {shell.container.name!r} was not analysed "
                          f"({facts.opaque}): the shell rules cannot tell what it does on "
                          "SIGTERM; move the logic into a file the image runs, or simplify it",
                          value=True)
