"""Locating the real tools and running them with a controlled environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def scripts_dir() -> str:
    """Where this interpreter's console scripts live (pmanifest, kubectl-pmanifest, kubectl)."""
    return sysconfig.get_path("scripts")


def tool(name: str) -> str:
    """The real executable, preferring this interpreter's scripts over shims on PATH."""
    found = shutil.which(name, path=scripts_dir()) or shutil.which(name)
    assert found, f"{name} is not installed (it is a test dependency of pmanifest)"
    return found


def clean_env(tmp: Path, **extra: str) -> dict[str, str]:
    """PATH limited to this interpreter's scripts and the system, an empty kubeconfig, a git
    identity: nothing from the developer's own setup leaks in."""
    kubeconfig = tmp / "kubeconfig"
    kubeconfig.touch()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GIT_", "PRE_COMMIT", "KUBE"))}
    env.update({
        "PATH": os.pathsep.join([scripts_dir(), os.path.dirname(sys.executable),
                                 "/usr/local/bin", "/usr/bin", "/bin"]),
        "KUBECONFIG": str(kubeconfig),
        "NO_COLOR": "1",
        "GIT_AUTHOR_NAME": "pmanifest tests", "GIT_AUTHOR_EMAIL": "tests@example.invalid",
        "GIT_COMMITTER_NAME": "pmanifest tests", "GIT_COMMITTER_EMAIL": "tests@example.invalid",
    })
    env.update(extra)
    return env


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 120,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, input=stdin, capture_output=True, text=True,
                          timeout=timeout, check=False)
