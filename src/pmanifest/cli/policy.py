"""``pmanifest policy test``: run the ``tests:`` of policies through the lint engine (a
command, so the policy package never imports the engine)."""

from __future__ import annotations

from pmanifest.kube.profile import DEFAULT_PROFILE
from pmanifest.policy import Policy, PolicyTest, load_policy_dirs


def policy_test_findings(policy: Policy, test: PolicyTest) -> list[str]:
    """``line:col slug`` of the policy's own findings on the test's manifest (the policy
    must be registered)."""
    from pmanifest.lint.engine import LintOptions, lint_bytes

    options = LintOptions(profile_name=test.profile or DEFAULT_PROFILE,
                          select=frozenset({policy.meta.id}))
    findings = lint_bytes(test.manifest.encode("utf-8"), "test.yaml", options)
    return [f"{f.line}:{f.column} {f.slug}" for f in findings if f.rule == policy.meta.id]


def run_policy_tests(directories: tuple[str, ...]) -> tuple[list[str], bool]:
    """Run the ``tests:`` of every policy in ``directories``. Returns (report lines, whether
    any test failed); invalid policy files: ConfigError."""
    from pmanifest.rules import registered

    policies = load_policy_dirs(directories)
    lines: list[str] = []
    passed = failed = 0
    with registered(p.rule() for p in policies):  # they join the registry for the run
        for policy in policies:
            if not policy.tests:
                lines.append(f"SKIP {policy.meta.id}: no tests ({policy.source})")
            for test in policy.tests:
                got = policy_test_findings(policy, test)
                if got == list(test.findings):
                    passed += 1
                    lines.append(f"PASS {policy.meta.id}: {test.name}")
                    continue
                failed += 1
                lines.append(f"FAIL {policy.meta.id}: {test.name} ({policy.source})")
                lines.append(f"    expected: {list(test.findings)}")
                lines.append(f"    got:      {got}")
    lines.append(f"{passed} passed, {failed} failed")
    return lines, failed > 0

