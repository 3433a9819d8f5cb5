"""Which paths a checkpoint command writes to."""

from __future__ import annotations

from pmanifest.shell.facts import COPIERS, NOT_DATA_SUFFIXES, REMOVERS, SYSTEM_DIRS, Command


def written_paths(command: Command) -> tuple[str, ...]:
    """Absolute paths a checkpoint command may write to: its absolute path operands and
    ``--flag=/path`` values, without the program, scripts, config files and system dirs; for
    copy-like commands only the destination; for ``tar`` the archive; none for a command that
    removes what it names (``rm -rf /registration/x.sock``: a cleanup)."""
    if command.program in REMOVERS:
        return ()
    args = list(command.args)
    if command.program == "tar":
        args = _tar_archive(args)
    elif command.program in COPIERS:
        operands = [a for a in args if not a.startswith("-")]
        args = operands[-1:]
    out: list[str] = []
    for arg in args:
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if _is_data_path(value) and value not in out:
            out.append(value)
    return tuple(out)


def _tar_archive(args: list[str]) -> list[str]:
    for i, arg in enumerate(args):
        if arg.startswith("--file="):
            return [arg.split("=", 1)[1]]
        if (arg == "--file" or (not arg.startswith("--") and "f" in arg.lstrip("-"))) and (
            i + 1 < len(args)
        ):
            return [args[i + 1]]
    return []


def _is_data_path(value: str) -> bool:
    if not value.startswith(("/", "$")) or value.endswith(NOT_DATA_SUFFIXES):
        return False
    if value.startswith("/"):
        return not any(value == d or value.startswith(d + "/") for d in SYSTEM_DIRS)
    return True  # ``$DIR/...``: the caller substitutes what it knows

