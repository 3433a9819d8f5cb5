"""A lint run as a gate that cannot pass by accident (issue 13): every behaviour with its exact
exit code, stdout and stderr.

- a run that finds no Kubernetes object is exit 2 naming what was read, unless --allow-empty;
- every run ends with a one-line summary on stderr (files, objects, rules), after the findings;
- the config's `exclude:` applies to files named on the command line (--no-force-exclude: not);
- a suppression that suppresses nothing is a PM005 warning; `inlineSuppressions: false`;
- kustomize patch fragments are reported once (PM007) and not linted;
- --color always colours piped output.

The terminal behaviours (order of findings and summary, the progress bar) run a real process on
a pseudo-terminal: tests/cli/test_terminal.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from pmanifest.cli.main import main
from pmanifest.lint.engine import ALWAYS
from pmanifest.rules import registry

# A run selects the rules the tests are about (the grace period and suppressions; PM001 and
# PM007 are always applied), so a new rule changes none of these outputs.
SELECT = ("--select", "PM201", "--select", "PM005")
RULES = len({"PM201", "PM005", *ALWAYS})
EVERY = len(registry())  # a run without --select applies every rule
# an object no rule has anything to say about: no pod, nothing to validate but its schema
CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: fast}\n"
GOOD = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train}
spec:
  podFailurePolicy:
    rules:
      - action: Ignore
        onPodConditions: [{type: DisruptionTarget}]
  template:
    spec:
      restartPolicy: Never
      nodeName: gpu-dp-001
      containers: [{name: main, image: busybox}]
"""
LONG_GRACE = GOOD.replace("      restartPolicy: Never\n",
                          "      restartPolicy: Never\n      terminationGracePeriodSeconds: 900\n"
                          ).replace("      nodeName: gpu-dp-001\n", "")
GRACE_FINDING = (
    "error PM201[grace-period-over-limit] terminationGracePeriodSeconds is 900, above the 300 s "
    "cap of preemptible nodes (together profile): the node is removed 300 s after the notice "
    "whatever the pod is doing; set it to 300 or less and finish the checkpoint inside that "
    "window")
FOREIGN_1 = ("pmanifest: 1 YAML document in 1 file skipped: not Kubernetes objects (no "
             "apiVersion and kind)\n")
EMPTY_TAIL = ": nothing was checked; name the manifests to lint, or pass --allow-empty where " \
             "none is expected\n"


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)  # relative names in findings; no config file from the tree
    return CliRunner()


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def run(runner: CliRunner, *args: str, stdin: str | None = None,
        select: tuple[str, ...] = SELECT) -> tuple[int, str, str]:
    result = runner.invoke(main, ["lint", *select, *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


# with no profile given and no provider label in the input, the run says which it assumed
ASSUMED = "profile together, the default: no provider label found\n"


def summary(counts: str, objects: str, rules: int = RULES) -> str:
    return f"{counts} ({objects}, {rules} rules)\n{ASSUMED}"


# --- no Kubernetes object: exit 2 -----------------------------------------------------------


def test_a_spec_file_is_not_a_manifest(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "spec.yaml", "apiVersion: pmanifest/v1\nworkloads: []\n")
    assert run(runner, "spec.yaml") == (2, "", (
        "pmanifest: no Kubernetes object found in spec.yaml (1 file read, no object with "
        "apiVersion and kind in it)" + EMPTY_TAIL))


def test_a_folder_of_json_only(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "k8s" / "job.json", '{"apiVersion": "batch/v1", "kind": "Job"}')
    assert run(runner, "k8s") == (2, "", (
        "pmanifest: no Kubernetes object found in k8s (no *.yaml or *.yml file in it)"
        + EMPTY_TAIL))


def test_many_paths_are_named_then_counted(runner: CliRunner, tmp_path: Path) -> None:
    for name in "abcde":
        write(tmp_path / f"{name}.yaml", "name: x\n")
    assert run(runner, "a.yaml", "b.yaml", "c.yaml", "d.yaml", "e.yaml") == (2, "", (
        "pmanifest: no Kubernetes object found in a.yaml, b.yaml, c.yaml and 2 more (5 files "
        "read, no object with apiVersion and kind in it)" + EMPTY_TAIL))


def test_stdin_is_named_by_its_file_name(runner: CliRunner) -> None:
    assert run(runner, "-", "--stdin-filename", "prod.yaml", stdin="values: {}\n") == (2, "", (
        "pmanifest: no Kubernetes object found in prod.yaml (1 file read, no object with "
        "apiVersion and kind in it)" + EMPTY_TAIL))


def test_allow_empty_passes_with_the_summary(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "k8s" / "values.yaml", "replicas: 3\n")
    assert run(runner, "k8s", "--allow-empty") == (
        0, "", summary("0 errors, 0 warnings, 0 info in 1 file", "0 objects") + FOREIGN_1)


def test_hidden_directories_are_not_walked_and_the_message_counts_them(
        runner: CliRunner, tmp_path: Path) -> None:
    """`.tekton/` and `.github/` hold CI definitions, not what the tree deploys: a walk
    leaves them, and when nothing else is there the message says how many YAML files it left
    where (git's own .git is not counted); named on the command line, they are linted."""
    write(tmp_path / "repo" / ".tekton" / "train.yaml", LONG_GRACE)
    write(tmp_path / "repo" / ".github" / "workflows" / "ci.yml", "on: push\n")
    write(tmp_path / "repo" / "app" / ".job.yaml", GOOD)
    write(tmp_path / "repo" / ".git" / "config.yaml", GOOD)
    write(tmp_path / "repo" / "build" / "out.yaml", GOOD)
    write(tmp_path / "repo" / "README.md", "# not yaml\n")
    write(tmp_path / "repo" / ".gitignore", "dist/\n")
    write(tmp_path / "repo" / "dist" / "a.yaml", GOOD)
    write(tmp_path / "repo" / "dist" / "b.yml", GOOD)
    assert run(runner, "repo", "--exclude", "repo/build") == (2, "", (
        "pmanifest: no Kubernetes object found in repo (no *.yaml or *.yml file walked: 3 in "
        "hidden directories or files, 1 excluded, 2 ignored by git; name them to lint them)"
        + EMPTY_TAIL))
    write(tmp_path / "repo" / "kustomization.yaml", "resources: [.tekton/train.yaml]\n")
    assert run(runner, "repo", "--exclude", "repo/build") == (2, "", (
        "pmanifest: no Kubernetes object found in repo (1 file read, no object with apiVersion "
        "and kind in it; YAML files not walked: 3 in hidden directories or files, 1 excluded, "
        "2 ignored by git)"
        + EMPTY_TAIL))
    code, out, _ = run(runner, "repo/.tekton", "repo/app/.job.yaml")
    assert (code, out) == (1, f"repo/.tekton/train.yaml:12:7: {GRACE_FINDING}\n")
    # beside one object, the walk still leaves them
    write(tmp_path / "repo" / "app" / "job.yaml", GOOD)
    assert run(runner, "repo")[:2] == (0, "")


# --- YAML that is no Kubernetes object: skipped, and counted --------------------------------


def test_other_tools_yaml_is_skipped_with_a_note_whatever_its_tags(
        runner: CliRunner, tmp_path: Path) -> None:
    """CloudFormation's `!Ref`, MkDocs' `!!python/name:` are no error outside an object; the
    note after the summary counts what was skipped (a kustomization is read as one, not
    counted); an object's own custom tag is still PM001."""
    write(tmp_path / "infra" / "stack.yaml",
          'AWSTemplateFormatVersion: "2010-09-09"\nResources:\n  B:\n    Type: AWS::S3::Bucket\n'
          "    Properties: {BucketName: !Sub '${AWS::StackName}-ckpt'}\n")
    write(tmp_path / "infra" / "mkdocs.yml",
          "site_name: x\nmarkdown_extensions:\n  - pymdownx.emoji:\n"
          "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n---\n"
          + CONFIG_MAP + "---\nstages: [build]\n")
    write(tmp_path / "infra" / "kustomization.yaml", "resources: [job.yaml]\n")
    write(tmp_path / "infra" / "job.yaml", GOOD.replace("image: busybox", "image: !Ref Img"))
    code, out, err = run(runner, "infra")
    assert (code, out) == (1, "infra/job.yaml:13:40: error PM001[yaml-syntax-error] "
                              "unsupported YAML tag '!Ref'\n")
    assert err == summary("1 error, 0 warnings, 0 info in 4 files", "1 object") + (
        "pmanifest: 3 YAML documents in 2 files skipped: not Kubernetes objects (no "
        "apiVersion and kind)\n")


def test_reports_are_not_written_when_nothing_was_checked(runner: CliRunner,
                                                          tmp_path: Path) -> None:
    write(tmp_path / "values.yaml", "replicas: 3\n")
    code, out, _ = run(runner, "values.yaml", "--format", "sarif", "--output", "r.sarif")
    assert (code, out) == (2, "")
    assert not (tmp_path / "r.sarif").exists()


def test_a_file_that_does_not_parse_fails_with_its_finding_not_exit_2(
        runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: x\n")
    code, out, err = run(runner, "broken.yaml")
    assert code == 1
    assert out.startswith("broken.yaml:4:1: error PM001[yaml-syntax-error] ")
    assert err == summary("1 error, 0 warnings, 0 info in 1 file", "0 objects")


# --- the summary ----------------------------------------------------------------------------


def test_a_clean_run_says_what_it_checked(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "k8s" / "a.yaml", GOOD)
    write(tmp_path / "k8s" / "b.yaml", GOOD + "---\n" + GOOD.replace("train", "eval"))
    assert run(runner, "k8s") == (
        0, "", summary("0 errors, 0 warnings, 0 info in 2 files", "3 objects"))
    # the rules counted are the rules applied: every rule by default, and --select and
    # --disable change the number
    write(tmp_path / "cm" / "settings.yaml", CONFIG_MAP)
    assert run(runner, "cm", select=()) == (
        0, "", summary("0 errors, 0 warnings, 0 info in 1 file", "1 object", EVERY))
    selected = len({"PM201", *ALWAYS})
    assert run(runner, "cm", "--select", "PM201", select=()) == (
        0, "", summary("0 errors, 0 warnings, 0 info in 1 file", "1 object", selected))
    assert run(runner, "cm", "--disable", "PM201", "--no-schema", select=()) == (
        0, "", summary("0 errors, 0 warnings, 0 info in 1 file", "1 object", EVERY - 2))


def test_the_summary_follows_json_and_file_reports_too(runner: CliRunner,
                                                       tmp_path: Path) -> None:
    write(tmp_path / "job.yaml", GOOD)
    code, out, err = run(runner, "job.yaml", "--format", "json", "--output", "r.json")
    assert (code, out, err) == (
        0, "", summary("0 errors, 0 warnings, 0 info in 1 file", "1 object"))


# --- exclude: applies to named files --------------------------------------------------------


def test_exclude_applies_to_files_named_on_the_command_line(runner: CliRunner,
                                                           tmp_path: Path) -> None:
    write(tmp_path / ".pmanifest.yaml", "exclude: ['vendor/*']\n")
    write(tmp_path / "vendor" / "job.yaml", LONG_GRACE)
    write(tmp_path / "k8s" / "job.yaml", GOOD)
    # as pre-commit calls the hook: every staged file by name
    assert run(runner, "vendor/job.yaml", "k8s/job.yaml") == (
        0, "", summary("0 errors, 0 warnings, 0 info in 1 file", "1 object"))
    assert run(runner, "./vendor/job.yaml") == (2, "", (
        "pmanifest: no Kubernetes object found in ./vendor/job.yaml (1 named path excluded by "
        "the config's exclude:)" + EMPTY_TAIL))
    assert run(runner, "vendor/job.yaml", "--no-force-exclude") == (
        1, f"vendor/job.yaml:12:7: {GRACE_FINDING}\n",
        summary("1 error, 0 warnings, 0 info in 1 file", "1 object"))


# --- suppressions that suppress nothing: PM005 ------------------------------------------------


def test_unknown_rule_names_in_suppressions_are_reported(runner: CliRunner,
                                                         tmp_path: Path) -> None:
    text = LONG_GRACE.replace(
        "metadata: {name: train}",
        'metadata:\n  name: train\n  annotations: {pmanifest.io/ignore: "ZZ999"}').replace(
        "terminationGracePeriodSeconds: 900",
        "terminationGracePeriodSeconds: 900  # pmanifest: ignore=PM2O1")
    write(tmp_path / "job.yaml", text)
    assert run(runner, "job.yaml") == (1, (
        "job.yaml:5:38: warning PM005[suppression-suppresses-nothing] annotation "
        "pmanifest.io/ignore names 'ZZ999', which is no rule, so it suppresses nothing; "
        "`pmanifest rules` lists the ids and slugs\n"
        f"job.yaml:14:7: {GRACE_FINDING}\n"
        "job.yaml:14:63: warning PM005[suppression-suppresses-nothing] `# pmanifest: ignore` "
        "names 'PM2O1', which is no rule (did you mean 'PM201'?), so it suppresses nothing; "
        "`pmanifest rules` lists the ids and slugs\n"),
        summary("1 error, 2 warnings, 0 info in 1 file", "1 object"))


def test_a_suppression_written_as_yaml_is_reported_not_honoured(runner: CliRunner,
                                                                 tmp_path: Path) -> None:
    """`ignore: PM201` (a colon, as in YAML) is no directive: the finding stays, and the
    comment is reported whether the name in it is a rule or not; the annotation, which is
    YAML, names an unknown rule with a suggestion."""
    text = LONG_GRACE.replace(
        "metadata: {name: train}",
        'metadata:\n  name: train\n  annotations: {pmanifest.io/ignore: "PM2O1"}').replace(
        "terminationGracePeriodSeconds: 900",
        "terminationGracePeriodSeconds: 900  # pmanifest: ignore: PM201\n"
        "      # pmanifest: ignore: PM2O1")
    write(tmp_path / "job.yaml", text)
    not_understood = ("warning PM005[suppression-suppresses-nothing] `# pmanifest:` comment not "
                      "understood, so it suppresses nothing; write `# pmanifest: "
                      "ignore=PM201[,RULE...] [reason=...]` with nothing after it")
    assert run(runner, "job.yaml") == (1, (
        "job.yaml:5:38: warning PM005[suppression-suppresses-nothing] annotation "
        "pmanifest.io/ignore names 'PM2O1', which is no rule (did you mean 'PM201'?), so it "
        "suppresses nothing; `pmanifest rules` lists the ids and slugs\n"
        f"job.yaml:14:7: {GRACE_FINDING}\n"
        f"job.yaml:14:45: {not_understood}\n"
        f"job.yaml:15:9: {not_understood}\n"),
        summary("1 error, 3 warnings, 0 info in 1 file", "1 object"))


def test_the_config_can_turn_suppressions_in_manifests_off(runner: CliRunner,
                                                           tmp_path: Path) -> None:
    write(tmp_path / "job.yaml", LONG_GRACE.replace(
        "terminationGracePeriodSeconds: 900",
        'terminationGracePeriodSeconds: 900  # pmanifest: ignore=PM201 reason="ok"'))
    assert run(runner, "job.yaml") == (
        0, "", summary("0 errors, 0 warnings, 0 info in 1 file", "1 object"))
    write(tmp_path / ".pmanifest.yaml", "inlineSuppressions: false\n")
    assert run(runner, "job.yaml") == (1, (
        f"job.yaml:12:7: {GRACE_FINDING}\n"
        "job.yaml:12:45: warning PM005[suppression-suppresses-nothing] `# pmanifest: ignore` is "
        "not honoured: suppressions in manifests are turned off by the config "
        "(inlineSuppressions: false); set the rule's level in the config instead\n"),
        summary("1 error, 1 warning, 0 info in 1 file", "1 object"))
    write(tmp_path / ".pmanifest.yaml", "inlineSuppressions: 'off'\n")
    code, _, err = run(runner, "job.yaml")
    assert (code, err) == (2, f"{tmp_path}/.pmanifest.yaml:1:21: inlineSuppressions must be a "
                              "boolean, got string; give a boolean\n")


# --- kustomize patches ----------------------------------------------------------------------


def test_a_patch_named_by_a_kustomization_is_skipped_and_said_so(runner: CliRunner,
                                                                 tmp_path: Path) -> None:
    write(tmp_path / "app" / "kustomization.yaml",
          "resources: [job.yaml]\npatches: [{path: patches/grace.yaml}]\n")
    write(tmp_path / "app" / "job.yaml", GOOD)
    write(tmp_path / "app" / "patches" / "grace.yaml",
          "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  template:\n"
          "    spec:\n      terminationGracePeriodSeconds: 900\n")
    fragment = ("app/patches/grace.yaml:1:1: info PM007[patch-fragment-skipped] Job 'train' is "
                "a patch named by app/kustomization.yaml: a fragment of an object, not linted "
                "on its own; lint what kustomize builds instead (`kubectl kustomize app | "
                "pmanifest lint -`)\n")
    assert run(runner, "app") == (0, fragment, summary(
        "0 errors, 0 warnings, 1 info in 3 files", "1 object, 1 patch fragment skipped"))
    # named alone, as pre-commit does: the kustomization above it is found; nothing else
    # was checked, so the gate does not pass silently
    assert run(runner, "app/patches/grace.yaml") == (2, "", (
        "pmanifest: no Kubernetes object found in app/patches/grace.yaml (1 file read, no "
        "object with apiVersion and kind in it but 1 patch fragment (PM007))" + EMPTY_TAIL))


def test_a_patch_reached_through_a_symbolic_link_is_found_from_where_it_lives(
        runner: CliRunner, tmp_path: Path) -> None:
    """The kustomization is looked for beside the real file, not beside the link (and a
    directory's real path, resolved once for all its files, still serves the plain files)."""
    write(tmp_path / "app" / "kustomization.yaml", "patches: [{path: grace.yaml}]\n")
    write(tmp_path / "app" / "grace.yaml",
          "apiVersion: batch/v1\nkind: Job\nmetadata: {name: train}\nspec:\n  template:\n"
          "    spec:\n      terminationGracePeriodSeconds: 900\n")
    write(tmp_path / "linked" / "job.yaml", GOOD)
    (tmp_path / "linked" / "grace.yaml").symlink_to(tmp_path / "app" / "grace.yaml")
    code, out, _ = run(runner, "linked/grace.yaml", "linked/job.yaml")
    assert code == 0
    assert out == ("linked/grace.yaml:1:1: info PM007[patch-fragment-skipped] Job 'train' is a "
                   "patch named by app/kustomization.yaml: a fragment of an object, not linted "
                   "on its own; lint what kustomize builds instead (`kubectl kustomize app | "
                   "pmanifest lint -`)\n")


def test_a_commented_out_patch_section_still_names_patches(runner: CliRunner,
                                                          tmp_path: Path) -> None:
    """kubebuilder's config/default comments out the whole section (`#patches:`) with its
    entries, each with its target; the files named there are patches (under any prefix), and
    a commented section that is not a patch list (`#replacements:`) names none."""
    write(tmp_path / "config" / "default" / "kustomization.yaml",
          "resources:\n- ../manager\n#patches:\n# [WEBHOOK] To enable webhook, uncomment\n"
          "#- path: manager_webhook_patch.yaml\n#  target:\n#    kind: Deployment\n"
          "#- path: ../patches/grace_patch.yaml\n#replacements:\n#- path: more.yaml\n")
    write(tmp_path / "config" / "default" / "manager_webhook_patch.yaml",
          LONG_GRACE.replace("train", "manager"))
    write(tmp_path / "config" / "patches" / "grace_patch.yaml", LONG_GRACE)
    write(tmp_path / "config" / "default" / "more.yaml", LONG_GRACE)
    code, out, _ = run(runner, "config")
    assert code == 1
    assert [line.split(" ")[0:2] for line in out.splitlines()] == [
        ["config/default/manager_webhook_patch.yaml:1:1:", "info"],
        ["config/default/more.yaml:12:7:", "error"],
        ["config/patches/grace_patch.yaml:1:1:", "info"]]


def test_every_file_of_a_patch_directory_is_a_patch(runner: CliRunner, tmp_path: Path) -> None:
    """A directory below a kustomization in which it names a patch is a patch directory
    (kubeflow's tensorboard base/patches/, kubebuilder's config/crd/patches/): a file there
    that no kustomization names is a fragment too. Still linted: a file there that a
    kustomization lists as a resource, files in a directory below it, files beside the
    kustomization itself, and files of a directory that is a kustomization of its own."""
    write(tmp_path / "app" / "kustomization.yaml",
          "resources: [job.yaml, patches/listed.yaml, base]\n"
          "patchesStrategicMerge: [patches/named.yaml, base/named.yaml, beside.yaml]\n")
    write(tmp_path / "app" / "job.yaml", GOOD)
    for name in ("named", "orphan", "listed", "deeper/more"):
        write(tmp_path / "app" / "patches" / f"{name}.yaml", LONG_GRACE)
    write(tmp_path / "app" / "beside.yaml", LONG_GRACE)
    write(tmp_path / "app" / "unlisted.yaml", LONG_GRACE)
    write(tmp_path / "app" / "base" / "kustomization.yaml", "resources: []\n")
    write(tmp_path / "app" / "base" / "named.yaml", LONG_GRACE)
    write(tmp_path / "app" / "base" / "other.yaml", LONG_GRACE)
    code, out, _ = run(runner, "app")
    tail = ("a fragment of an object, not linted on its own; lint what kustomize builds instead "
            "(`kubectl kustomize app | pmanifest lint -`)")
    assert code == 1
    assert out.splitlines() == [
        "app/base/named.yaml:1:1: info PM007[patch-fragment-skipped] Job 'train' is a patch "
        f"named by app/kustomization.yaml: {tail}",
        f"app/base/other.yaml:12:7: {GRACE_FINDING}",
        "app/beside.yaml:1:1: info PM007[patch-fragment-skipped] Job 'train' is a patch "
        f"named by app/kustomization.yaml: {tail}",
        f"app/patches/deeper/more.yaml:12:7: {GRACE_FINDING}",
        f"app/patches/listed.yaml:12:7: {GRACE_FINDING}",
        "app/patches/named.yaml:1:1: info PM007[patch-fragment-skipped] Job 'train' is a patch "
        f"named by app/kustomization.yaml: {tail}",
        "app/patches/orphan.yaml:1:1: info PM007[patch-fragment-skipped] Job 'train' is in "
        f"app/patches/, where app/kustomization.yaml names its patches, {tail}",
        f"app/unlisted.yaml:12:7: {GRACE_FINDING}"]
    # named alone, as pre-commit does: the kustomization above it is found
    assert run(runner, "app/patches/orphan.yaml")[0] == 2


# (kubeflow/manifests' centraldashboard base: no selector of its own, kustomize adds it)
DASHBOARD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: dashboard}
spec:
  replicas: 1
  template:
    spec:
      containers: [{name: ui, image: kubeflownotebookswg/centraldashboard}]
"""
NO_SELECTOR = "error PM002[schema-invalid] spec is missing 'selector'; add it"


def test_a_selector_a_kustomization_supplies_is_not_missing(runner: CliRunner,
                                                            tmp_path: Path) -> None:
    """`labels` with includeSelectors and `commonLabels` (here an overlay's, reaching its base)
    put the selector there when kustomize builds: PM002 validates what it builds. Labels
    without includeSelectors, and a file no kustomization names, still lack one."""
    write(tmp_path / "base" / "kustomization.yaml",
          "resources: [dashboard.yaml]\nlabels:\n- pairs: {app: dashboard}\n"
          "  includeSelectors: true\n")
    write(tmp_path / "base" / "dashboard.yaml", DASHBOARD)
    write(tmp_path / "plain" / "kustomization.yaml",
          "resources: [dashboard.yaml]\nlabels:\n- pairs: {app: dashboard}\n")
    write(tmp_path / "plain" / "dashboard.yaml", DASHBOARD)
    write(tmp_path / "plain" / "unlisted.yaml", DASHBOARD)
    write(tmp_path / "app" / "base" / "kustomization.yaml", "resources:\n- dashboard.yaml\n")
    write(tmp_path / "app" / "base" / "dashboard.yaml", DASHBOARD)
    write(tmp_path / "app" / "overlay" / "kustomization.yaml",
          "resources: [../base]\ncommonLabels: {app.kubernetes.io/part-of: kubeflow}\n")
    code, out, _ = run(runner, "base", "plain", "app", select=("--select", "PM002"))
    assert (code, out) == (1, f"plain/dashboard.yaml:4:1: {NO_SELECTOR}\n"
                              f"plain/unlisted.yaml:4:1: {NO_SELECTOR}\n")


WEBHOOK = """\
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: poddefaults}
webhooks:
- name: poddefaults.kubeflow.org
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
    service: {name: service, path: /apply-poddefault}
"""
SERVICE = "apiVersion: v1\nkind: Service\nmetadata: {name: service}\nspec: {ports: [{port: 443}]}\n"


def test_a_webhook_namespace_a_kustomize_build_supplies_is_not_missing(
        runner: CliRunner, tmp_path: Path) -> None:
    """kubeflow's admission-webhook base: `namespace:` and the Service the webhook names in the
    same build, so kustomize writes the namespace (tests/integration/test_kustomize_build.py
    checks each layout against kubectl). Without the Service in the build, or without a
    namespace set, it stays missing."""
    write(tmp_path / "base" / "kustomization.yaml",
          "namespace: kubeflow\nresources: [webhook.yaml, service.yaml]\n")
    write(tmp_path / "base" / "webhook.yaml", WEBHOOK)
    write(tmp_path / "base" / "service.yaml", SERVICE)
    write(tmp_path / "alone" / "kustomization.yaml",
          "namespace: kubeflow\nresources: [webhook.yaml]\n")
    write(tmp_path / "alone" / "webhook.yaml", WEBHOOK)
    write(tmp_path / "plain" / "kustomization.yaml", "resources: [webhook.yaml, service.yaml]\n")
    write(tmp_path / "plain" / "webhook.yaml", WEBHOOK)
    write(tmp_path / "plain" / "service.yaml", SERVICE)
    missing = ("error PM002[schema-invalid] webhooks[0].clientConfig.service is missing "
               "'namespace'; add it")
    code, out, _ = run(runner, "base", "alone", "plain", select=("--select", "PM002"))
    assert (code, out) == (1, f"alone/webhook.yaml:9:5: {missing}\n"
                              f"plain/webhook.yaml:9:5: {missing}\n")


def test_kustomizations_that_include_each_other_end(runner: CliRunner, tmp_path: Path) -> None:
    """A cycle of bases (kustomize itself refuses it) is followed once per set of labels."""
    write(tmp_path / "a" / "kustomization.yaml",
          "resources: [../b, dashboard.yaml]\ncommonLabels: {x: '1'}\n")
    write(tmp_path / "b" / "kustomization.yaml", "resources: [../a]\ncommonLabels: {y: '2'}\n")
    write(tmp_path / "a" / "dashboard.yaml", DASHBOARD)
    assert run(runner, "a", "b", select=("--select", "PM002"))[:2] == (0, "")


# --- colour ---------------------------------------------------------------------------------


def test_color_always_colours_piped_output(runner: CliRunner, tmp_path: Path) -> None:
    write(tmp_path / "job.yaml", LONG_GRACE)
    coloured = GRACE_FINDING.replace("error ", "\x1b[31merror\x1b[0m ", 1)
    assert run(runner, "job.yaml", "--color", "always") == (
        1, f"job.yaml:12:7: {coloured}\n", summary("1 error, 0 warnings, 0 info in 1 file",
                                                   "1 object"))
    assert run(runner, "job.yaml", "--color", "never")[1] == f"job.yaml:12:7: {GRACE_FINDING}\n"
    assert run(runner, "job.yaml")[1] == f"job.yaml:12:7: {GRACE_FINDING}\n"  # auto: a pipe


def test_commented_out_patch_entries_of_a_scaffold_still_name_patches(
        runner: CliRunner, tmp_path: Path) -> None:
    """kubebuilder writes `#- path: patches/...` lines: the files are patches either way; a
    commented resource is not."""
    write(tmp_path / "crd" / "kustomization.yaml",
          "resources:\n- bases/jobs.yaml\n#- bases/more.yaml\npatches:\n"
          "# [CERTMANAGER] uncomment to enable\n#- path: patches/cainjection_in_jobs.yaml\n"
          "configurations:\n- kustomizeconfig.yaml\n")
    write(tmp_path / "crd" / "patches" / "cainjection_in_jobs.yaml",
          "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
          "  name: jobs.example.com\n")
    write(tmp_path / "crd" / "bases" / "more.yaml", LONG_GRACE)
    code, out, err = run(runner, "crd")
    assert (code, err) == (1, summary("1 error, 0 warnings, 1 info in 3 files",
                                      "1 object, 1 patch fragment skipped"))
    assert out.splitlines() == [
        f"crd/bases/more.yaml:12:7: {GRACE_FINDING}",
        "crd/patches/cainjection_in_jobs.yaml:1:1: info PM007[patch-fragment-skipped] "
        "CustomResourceDefinition 'jobs.example.com' is a patch named by "
        "crd/kustomization.yaml: a fragment of an object, not linted on its own; lint what "
        "kustomize builds instead (`kubectl kustomize crd | pmanifest lint -`)"]
