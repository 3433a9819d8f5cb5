"""What a lint run passes over without linting it, counted per file (``FileResult.passed``) and
told once after the summary: files that are unrendered templates (a ``{{ }}`` placeholder broke
their YAML: their documents that hold a ``{{`` or break are not linted, the others are),
objects that are test assertions (patterns a harness matches against live objects, see
:mod:`pmanifest.lint.testharness`), and files that hold unrendered placeholders (linted, but a
field that is wholly one is not type-checked, see :mod:`pmanifest.schema.placeholders`).
"""

from __future__ import annotations

from collections.abc import Mapping

TEMPLATE = "template"  # a file that is an unrendered template
ASSERTION = "assertion"  # an object that is a test harness's pattern, not applied
PLACEHOLDER = "placeholder"  # a file with values that are wholly a placeholder
TEMPLATE_FILE = ((TEMPLATE, 1),)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def passed_notes(passed: Mapping[str, int]) -> list[str]:
    """The lines after the summary that say what the run passed over without linting it."""
    notes = []
    if passed.get(TEMPLATE):
        notes.append(f"pmanifest: {_plural(passed[TEMPLATE], 'unrendered template file')} "
                     "({{ }} placeholders where the YAML breaks): their templated documents are "
                     "not linted; lint the rendered output (helm template, envsubst, ...)")
    if passed.get(ASSERTION):
        notes.append(f"pmanifest: {_plural(passed[ASSERTION], 'test assertion')} skipped: "
                     "patterns a test harness (chainsaw, kuttl) matches against live objects, "
                     "not objects to apply")
    if passed.get(PLACEHOLDER):
        notes.append(f"pmanifest: {_plural(passed[PLACEHOLDER], 'file')} with unrendered "
                     "placeholders (a value that is wholly ${NAME} or $NAME): such values are "
                     "not type-checked; lint the rendered output for that")
    return notes
