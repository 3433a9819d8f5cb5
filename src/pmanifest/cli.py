"""Command-line wiring only: parse flags, call a command, map errors to exit codes.

Exit codes: 0 clean, 1 findings at or above --fail-on (lint) or drift (render --check),
2 usage/config/spec/input error (one line on stderr, nothing on stdout), 3 internal error.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from pmanifest import __version__
from pmanifest.errors import PmanifestError

EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class _Group(click.Group):
    """The one error boundary: user mistakes become one line and exit 2, bugs exit 3."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except PmanifestError as exc:
            message = str(exc) if exc.file else f"pmanifest: {exc}"
            click.echo(message.replace("\n", " "), err=True)
            ctx.exit(EXIT_USAGE)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except BrokenPipeError:
            sys.stderr.close()  # the reader went away (| head); nothing more to say
            ctx.exit(EXIT_FINDINGS)
        except Exception as exc:
            click.echo(
                f"pmanifest: internal error: {type(exc).__name__}: {exc} "
                "(this is a bug in pmanifest; please report it with the input that caused it)",
                err=True,
            )
            ctx.exit(EXIT_INTERNAL)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="pmanifest")
def main() -> None:
    """Preemption-aware Kubernetes manifests for GPU clusters.

    \b
    render   small spec -> Jobs and Deployments that survive preemption
    lint     manifests -> findings (pre-commit, CI gates)
    """


# --- render / schema (spec -> manifests) -------------------------------------------------
# (defined in this section; see pmanifest.render and pmanifest.spec)


# --- lint / rules / explain -----------------------------------------------------------------
# (defined in this section; see pmanifest.lint)
