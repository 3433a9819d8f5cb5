"""``python -m pmanifest.rules.new PMxxx slug [--family NAME]``: write the three files of a new
built-in rule (STYLE.md, "Writing a rule") in the source checkout, then regenerate the
catalogue's snapshots:

1. the check, ``src/pmanifest/rules/<family>.py`` (a new module, or appended to the family's);
2. its catalogue entry, appended to ``policies/rules-<family>.yaml``;
3. its case file, ``tests/rules/cases/PMxxx.yaml``, with a failing and a passing case.

What it writes is a start, not a rule: the check finds nothing, so the catalogue's failing
example and the failing case fail until the check is written. A tool, not a check: the
registry does not import this module (``rules.TOOLS``).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Sequence

from pmanifest.catalogue import RULE_ID, SLUG, lookup
from pmanifest.io.reading import source_checkout
from pmanifest.io.writing import say

FAMILY = re.compile(r"^[a-z][a-z0-9_]*$")

CHECK = '''

@rule("{id}")
def {function}(ctx: Context) -> Iterator[Hit]:
    """{id} ({slug}): what it finds, in one sentence. Write the check, then its cases."""
    w = ctx.workload
    if not w.placement.preemptible:
        return
    yield from ()  # yield Hit(path, message) for what is wrong, at the field that says so
'''

MODULE_HEAD = '''"""{id}: what the rule finds (see policies/rules-{family}.yaml)."""

from __future__ import annotations

from collections.abc import Iterator

from pmanifest.rules import Context, Hit, rule
'''

ENTRY = '''- id: {id}
  slug: {slug}
  severity: warning
  summary: One line, for `pmanifest rules`.
  rationale: >
    Why this is a mistake on clusters with preemptible nodes, what it costs.
  fix: >
    What to change, with the values to use.
  examples:
    fail: |
{fail}
    pass: |
{passing}
'''

CATALOGUE_HEAD = ("# {family} rules (checks in src/pmanifest/rules/{family}.py). Entry format: "
                  "src/pmanifest/catalogue.py.\n")

FAILING = """apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {together.ai/compute-class: preemptible}
      containers:
        - {name: main, image: busybox}"""

PASSING = """apiVersion: v1
kind: ConfigMap
metadata: {name: settings}"""

CASES = '''rule: {id}
cases:
  - name: the mistake, found at its field
    manifest: |
{fail}
    findings: ["1:1 {slug}"]  # the line:col of the field, and the slug
  - name: the same pod done right
    manifest: |
{passing}
    findings: []
'''


def _indent(text: str, spaces: int) -> str:
    return "\n".join(" " * spaces + line for line in text.splitlines())


def refuse(rule_id: str, slug: str, family: str) -> str | None:
    """Why the rule cannot be made (None: it can)."""
    if not RULE_ID.match(rule_id):
        return f"{rule_id}: a rule id is PM and three digits, e.g. PM407"
    if not SLUG.match(slug):
        return f"{slug}: a slug is lowercase words joined by '-', e.g. grace-period-over-limit"
    if not FAMILY.match(family):
        return f"{family}: a family is a module name, e.g. jobs"
    for name in (rule_id, slug):
        if lookup(name) is not None:
            return f"{name} is taken: choose another"
    return None


def files(root: str, rule_id: str, slug: str, family: str) -> dict[str, str]:
    """Path -> new text of every file the rule adds or extends."""
    module = os.path.join(root, "src", "pmanifest", "rules", f"{family}.py")
    catalogue = os.path.join(root, "policies", f"rules-{family}.yaml")
    cases = os.path.join(root, "tests", "rules", "cases", f"{rule_id}.yaml")
    fields = {"id": rule_id, "slug": slug, "family": family,
              "function": slug.replace("-", "_")}
    head = MODULE_HEAD.format(**fields)
    entry = ENTRY.format(**fields, fail=_indent(FAILING, 6), passing=_indent(PASSING, 6))
    return {
        module: (_read(module) or head) + CHECK.format(**fields),
        catalogue: (_read(catalogue) or CATALOGUE_HEAD.format(**fields)) + entry,
        cases: CASES.format(**fields, fail=_indent(FAILING, 6), passing=_indent(PASSING, 6)),
    }


def _read(path: str) -> str | None:
    """A file of the developer's checkout that the rule extends (None when it is new)."""
    from pmanifest.io.reading import Unreadable, read_limited

    if not os.path.exists(path):
        return None
    try:
        return read_limited(path, regular_only=True, record=False)[0].decode("utf-8")
    except Unreadable as exc:
        raise SystemExit(f"pmanifest.rules.new: {path}: cannot read: {exc.reason}") from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pmanifest.rules.new",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("id", help="the rule id, e.g. PM407")
    parser.add_argument("slug", help="the rule slug, e.g. job-without-deadline")
    parser.add_argument("--family", default=None,
                        help="the module and catalogue file [default: the slug]")
    parser.add_argument("--root", default=None, help="the source checkout [default: the one "
                                                     "pmanifest runs from]")
    args = parser.parse_args(argv)
    family = args.family or args.slug.replace("-", "_")
    root = args.root or source_checkout()
    problem = refuse(args.id, args.slug, family) if root else \
        "pmanifest is not running from a source checkout: install it with pip install -e ."
    if problem is not None or root is None:
        say(f"pmanifest.rules.new: {problem}")
        return 2
    cases = os.path.join(root, "tests", "rules", "cases", f"{args.id}.yaml")
    if os.path.exists(cases):
        say(f"pmanifest.rules.new: {cases} exists already")
        return 2
    from pmanifest.io.writing import write_files

    made = files(root, args.id, args.slug, family)
    write_files(made, "a new rule's file")
    for path in made:
        print(f"wrote {path}")
    if args.root is None:  # the catalogue changed: its snapshot is stale
        subprocess.run([sys.executable, "-m", "pmanifest.generate"], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
