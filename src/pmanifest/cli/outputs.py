"""The reports of a run that prints findings (lint, cluster check): ``--format``/``--output``
pairs and the one writer's targets for them."""

from __future__ import annotations

from typing import NamedTuple

from pmanifest.errors import ConfigError
from pmanifest.io.writing import STDOUT, Target


class Output(NamedTuple):
    """One report of a lint run: its format and where it goes."""

    format: str
    path: str = STDOUT  # "-" for stdout


def pair_outputs(formats: tuple[str, ...], paths: tuple[str, ...]) -> tuple[Output, ...]:
    """``--format``/``--output`` pairs, in order. Raises ConfigError for what cannot pair."""
    formats = formats or ("text",)
    if len(paths) > len(formats):
        extra = ", ".join(paths[len(formats):])
        raise ConfigError(f"--output {extra}: no --format to pair with (give one --format "
                          "per --output, in order)")
    outputs = tuple(Output(fmt, paths[i] if i < len(paths) else STDOUT)
                    for i, fmt in enumerate(formats))
    to_stdout = [o.format for o in outputs if o.path == STDOUT]
    if len(to_stdout) > 1:
        raise ConfigError(f"formats {', '.join(to_stdout)} would all go to stdout; "
                          "give each but one an --output FILE")
    return outputs


def output_targets(outputs: tuple[Output, ...]) -> list[Target]:
    """The one writer's targets of ``--output`` pairs."""
    return [Target("--output", o.path) for o in outputs]
