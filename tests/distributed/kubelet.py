"""Start a rendered container's process the way a kubelet would, on this machine.

What the kubelet does and is done here: the environment from ``env`` (``value``, or
``valueFrom.fieldRef`` from the values the caller gives, as the downward API would), ``HOSTNAME``
set to the pod's hostname, ``$(VAR)`` references in ``command`` and ``args`` expanded with
Kubernetes' rules (``$$`` is a literal ``$``; an unknown reference stays as written), and
SIGTERM to the container's main process on termination. The image is this machine: the
processes find ``python`` and ``torchrun`` of the running interpreter first on ``PATH``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' expansion of ``$(VAR)`` in command and args (third_party/forked/golang/
    expansion): ``$$`` -> ``$``, ``$(NAME)`` -> its value when NAME is defined, else kept."""
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "$" or i + 1 == len(text):
            out.append(char)
            i += 1
            continue
        following = text[i + 1]
        if following == "$":
            out.append("$")
            i += 2
        elif following == "(":
            close = text.find(")", i + 2)
            if close == -1:
                out.append("$(")
                i += 2
            else:
                name = text[i + 2:close]
                out.append(env.get(name, f"$({name})"))
                i = close + 1
        else:
            out.append("$" + following)
            i += 2
    return "".join(out)


def container_env(container: dict[str, Any], hostname: str,
                  fields: dict[str, str]) -> dict[str, str]:
    """The process environment of ``container``: this machine's PATH (the image), then the
    container's variables; ``fields`` maps a fieldRef's fieldPath to its value."""
    bin_dir = str(Path(sys.executable).parent)
    env = {"PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""), "HOSTNAME": hostname,
           "LANG": "C.UTF-8"}
    for var in container.get("env", []):
        if "value" in var:
            env[var["name"]] = expand(str(var["value"]), env)
        else:
            env[var["name"]] = fields[var["valueFrom"]["fieldRef"]["fieldPath"]]
    return env


@dataclass
class Container:
    """One running container process (its main process is what receives SIGTERM)."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def terminate(self) -> None:
        """The kubelet's SIGTERM to the container's main process."""
        self.process.send_signal(signal.SIGTERM)

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout=timeout)

    def kill_tree(self) -> None:
        """Clean-up: end whatever of the container is still running (its session)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def start(name: str, container: dict[str, Any], *, hostname: str, fields: dict[str, str],
          rewrite: dict[str, str], workdir: Path) -> Container:
    """Start ``container`` (rendered YAML) as a process. ``rewrite`` maps argument text to its
    replacement after expansion (the test's host mapping, e.g. a Service name to 127.0.0.1)."""
    env = container_env(container, hostname, fields)
    argv = [expand(str(a), env) for a in [*container.get("command", []),
                                          *container.get("args", [])]]
    for old, new in rewrite.items():
        argv = [arg.replace(old, new) for arg in argv]
    log = workdir / f"{name}.log"
    attempt = 1
    while log.exists():  # a replacement pod of the same name keeps its own log
        attempt += 1
        log = workdir / f"{name}.{attempt}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(argv, env=env, cwd=workdir, stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    return Container(name, process, log)


def wait_for(condition: Any, timeout: float, what: str, interval: float = 0.2) -> Any:
    """Poll ``condition()`` until it returns something true; AssertionError after timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
