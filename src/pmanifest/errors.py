"""The one exception hierarchy: operational failures, never findings.

Every error carries the file (and position where known) so the CLI can print one line
``file:line:col: message`` and exit 2. Anything else that escapes is a bug (exit 3).
"""

from __future__ import annotations


class PmanifestError(Exception):
    """A failure caused by the user's input or environment; reported as one line, exit 2."""

    def __init__(
        self,
        message: str,
        file: str | None = None,
        line: int | None = None,
        column: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.column = column

    def __str__(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            where += ": "
        return where + self.message


class InputError(PmanifestError):
    """A file that cannot be read or parsed."""


class SpecError(PmanifestError):
    """A pmanifest spec that is invalid."""


class ConfigError(PmanifestError):
    """A configuration file or flag that is invalid."""


class TemplateError(PmanifestError):
    """A template that fails to render or renders something invalid."""


class Terminated(BaseException):
    """SIGTERM reached the process while it waited for its workers (``lint --jobs``): like
    KeyboardInterrupt, not an error of the run; the CLI ends quietly with 143 (128 + SIGTERM)."""
