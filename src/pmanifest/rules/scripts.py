"""PM006: a shell script pmanifest did not read to the end (see policies/rules-engine.yaml).

The shell analysis gives up on scripts past its budget (functions that call each other into an
exponential number of steps) or its nesting bound; their facts are empty, so the shell rules
stay silent on them. This rule says so instead of letting the silence pass for a clean bill."""

from __future__ import annotations

from collections.abc import Iterator

from pmanifest.rules import Context, Hit, rule
from pmanifest.shell import analyse, container_script, prestop_of


@rule("PM006")
def script_not_analysed(ctx: Context) -> Iterator[Hit]:
    for container in ctx.workload.containers():
        scripts = []
        found = container_script(container.data)
        if found is not None and isinstance(found[1], str):
            scripts.append(("script", found))
        prestop = prestop_of(container.data)
        if prestop is not None and prestop.script is not None:
            scripts.append(("preStop hook", prestop.script))
        for what, (path, text) in scripts:
            opaque = analyse(text).opaque
            if opaque:
                yield Hit((*container.path, *path),
                          f"the {what} of container {container.name!r} was not analysed "
                          f"({opaque}): the shell rules cannot tell what it does on SIGTERM; "
                          "move the logic into a file the image runs, or simplify it",
                          value=True)
