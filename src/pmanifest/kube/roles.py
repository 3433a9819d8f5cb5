"""What a pod's role is, from what it runs: the one place pmanifest guesses a role.

The table of kinds (:mod:`pmanifest.kube.kinds`) says what most templates are; where it cannot
tell (a pod template found by shape in a kind it does not know), the pod's own containers
decide, first found wins:

1. an inference server on the command line (``vllm serve``, ``python -m
   vllm.entrypoints.openai.api_server``, ``sglang.launch_server``, ``tritonserver``,
   ``text-generation-launcher``, Ray Serve's ``serve run``, ``llama-server``, ``ollama serve``,
   ``torchserve``, KServe's model servers): serving;
2. a training launcher on the command line (torchrun, ``python -m torch.distributed.run``,
   deepspeed, ``accelerate launch``, mpirun, horovodrun): worker;
3. a database, queue or object store image, whatever its version suffix (``mysql-80``,
   ``postgresql-16``, ``redis7``, ``bitnami/mongodb``, ``minio``): a stateful anchor
   (coordinator);
4. an inference server's image (``vllm/vllm-openai``, ``nvcr.io/nvidia/tritonserver``): serving;
5. a pod that runs to completion (``restartPolicy`` Never or OnFailure, a Job spec around
   it): worker;
6. a container that serves a port and has a readinessProbe: serving;
7. otherwise the role is unknown (``UNKNOWN_ROLE``) and only the rules that hold for every
   role check it.

Words are read from the containers' command and args (a ``sh -c`` script's words too), never
from the object's name.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from pmanifest.kube.contract import COORDINATOR_ROLE, SERVING_ROLE, UNKNOWN_ROLE, WORKER_ROLE
from pmanifest.kube.kinds import STATEFUL_IMAGES, STATEFUL_PREFIXES, STATEFUL_SUFFIXES

# Programs (the last path component of a command word) and python modules that serve models.
SERVING_PROGRAMS = frozenset({
    "tritonserver", "text-generation-launcher", "text-generation-router", "llama-server",
    "torchserve", "trtllm-serve", "mlserver", "tgi", "infinity_emb", "kserve-container",
})
SERVING_MODULES = (
    "vllm.entrypoints", "sglang.launch_server", "sglang_router.launch", "llama_cpp.server",
    "lmdeploy.serve", "text_generation_server", "tensorrt_llm.serve", "kserve.",
    "sklearnserver", "xgbserver", "lgbserver", "pmmlserver", "paddleserver",
    "huggingfaceserver", "ray.serve", "fastchat.serve", "tgis_native",
)
# A program followed by a subcommand that serves: `vllm serve`, `ollama serve`, `serve run`.
SERVING_SUBCOMMANDS = frozenset({
    ("vllm", "serve"), ("ollama", "serve"), ("ollama", "start"), ("serve", "run"),
    ("serve", "deploy"), ("lmdeploy", "serve"), ("mlserver", "start"), ("sglang", "serve"),
})
TRAINING_PROGRAMS = frozenset({"torchrun", "deepspeed", "mpirun", "mpiexec", "horovodrun"})
TRAINING_MODULES = ("torch.distributed.run", "torch.distributed.launch")
TRAINING_SUBCOMMANDS = frozenset({("accelerate", "launch")})
# Path components of inference servers' images (its first word, ``-`` or ``_`` separated:
# vllm-openai, tritonserver, text-generation-inference, ollama, llama.cpp).
SERVING_IMAGES = frozenset({
    "vllm", "sglang", "tritonserver", "text-generation-inference", "ollama", "torchserve",
    "llama.cpp", "huggingfaceserver", "sklearnserver", "xgbserver", "lgbserver", "mlserver",
    "tgi", "lmdeploy", "trtllm",
})
# Fields of a batch/v1 JobSpec: a pod template next to them runs to completion.
JOB_FIELDS = frozenset({"backoffLimit", "completions", "parallelism", "activeDeadlineSeconds",
                        "ttlSecondsAfterFinished", "podFailurePolicy", "completionMode"})
RUN_TO_COMPLETION = frozenset({"Never", "OnFailure"})

_WORDS = re.compile(r"[^\s'\";|&()`<>]+")


class Inference(NamedTuple):
    """A role worked out from what a pod runs, and why (for messages)."""

    role: str  # serving | worker | coordinator | unknown
    reason: str


def infer(pod: dict[str, Any], job_like: bool = False) -> Inference:
    """The role of ``pod`` (a pod spec) from its (non-init) containers. ``job_like``: the
    template sits where a Job's pods do (a Job spec, a ``jobTemplate``)."""
    containers = [c for c in _list(pod.get("containers")) if isinstance(c, dict)]
    for container in containers:
        found = _command_role(container)
        if found is not None:
            return found
    found = _image_role(containers)
    if found is not None:
        return found
    restart = pod.get("restartPolicy")
    if isinstance(restart, str) and restart in RUN_TO_COMPLETION:  # (any value: the input's)
        return Inference(WORKER_ROLE, f"restartPolicy {restart}: its pods run to completion")
    if job_like:
        return Inference(WORKER_ROLE, "it sits in a Job spec: its pods run to completion")
    for container in containers:
        if _ports(container) and isinstance(container.get("readinessProbe"), dict):
            return Inference(SERVING_ROLE,
                             f"container {container.get('name', '?')!r} serves a port and "
                             "has a readinessProbe")
    return Inference(UNKNOWN_ROLE, "nothing it runs tells its role")


def _image_role(containers: list[dict[str, Any]]) -> Inference | None:
    images = [c["image"] for c in containers if isinstance(c.get("image"), str)]
    for image in images:
        if stateful_image(image):
            return Inference(COORDINATOR_ROLE,
                             f"its image {image} is a database, queue or object store")
    for image in images:
        if serving_image(image):
            return Inference(SERVING_ROLE, f"its image {image} is an inference server")
    return None


def job_like(holder: Any, pod_path: tuple[str | int, ...]) -> bool:
    """Is the pod template at ``pod_path`` a Job's: below a ``jobTemplate``, or held (as
    ``template.spec``) by a mapping with a JobSpec's fields? ``holder``: what holds its
    ``template``."""
    if "jobTemplate" in pod_path:
        return True
    return pod_path[-2:] == ("template", "spec") and isinstance(holder, dict) and \
        any(key in holder for key in JOB_FIELDS)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _ports(container: dict[str, Any]) -> bool:
    return any(isinstance(p, dict) and "containerPort" in p for p in _list(container.get("ports")))


def words(container: dict[str, Any]) -> Iterator[str]:
    """The words of a container's command and args, a script's words among them."""
    for key in ("command", "args"):
        for item in _list(container.get(key)):
            if isinstance(item, str):
                yield from _WORDS.findall(item)


def _command_role(container: dict[str, Any]) -> Inference | None:
    said = list(words(container))
    for i, word in enumerate(said):
        program = posixpath.basename(word)
        after = posixpath.basename(said[i + 1]) if i + 1 < len(said) else ""
        if program in SERVING_PROGRAMS or (program, after) in SERVING_SUBCOMMANDS or \
                any(word.startswith(m) for m in SERVING_MODULES):
            shown = f"{program} {after}" if (program, after) in SERVING_SUBCOMMANDS else word
            return Inference(SERVING_ROLE, f"it runs `{shown}`, an inference server")
        if program in TRAINING_PROGRAMS or (program, after) in TRAINING_SUBCOMMANDS or \
                word in TRAINING_MODULES:
            shown = f"{program} {after}" if (program, after) in TRAINING_SUBCOMMANDS else program
            return Inference(WORKER_ROLE, f"it runs `{shown}`, a training launcher")
    return None


def image_name(image: str) -> str:
    """``docker.io/bitnami/postgresql:16@sha256:..`` -> ``postgresql``: the last path
    component without tag and digest, in lower case."""
    return image.split("@", 1)[0].rsplit("/", 1)[-1].split(":", 1)[0].lower()


def serving_image(image: str) -> bool:
    """``vllm/vllm-openai:v0.6`` -> True: a path component of the image (tag and digest
    removed), or its first ``-``/``_`` word, is an inference server's."""
    path = image.split("@", 1)[0].lower()
    last = path.rsplit("/", 1)[-1]
    path = path[:len(path) - len(last)] + last.split(":", 1)[0]
    for component in path.split("/")[1:] if "/" in path else [path]:
        if component in SERVING_IMAGES or re.split(r"[-_]", component)[0] in SERVING_IMAGES:
            return True
    return False


def stateful_name_pattern(word: Callable[[str], str], letter: str, digit: str) -> str:
    """The grammar of a database, queue or object store's image name (lower case, as
    :func:`image_name` gives it), as a regular expression: an optional prefix (``cp-``), the
    database's own name with any digits (``redis7``), version words (``-80``, ``-16``,
    ``-c9s``, ``-el8``), an optional suffix (``-stack-server``) and more version words.
    ``word``, ``letter`` and ``digit`` spell its pieces (RE2 wants other letter classes)."""
    def alternatives(items: frozenset[str]) -> str:
        return "(?:" + "|".join(word(w) for w in sorted(items)) + ")"

    sep = "[-_.]"
    version = (f"(?:v?{digit}(?:{letter}|{digit})*"
               f"|{letter}{{1,4}}{digit}(?:{letter}|{digit})*)")
    return (f"(?:{alternatives(STATEFUL_PREFIXES)}-)?{alternatives(STATEFUL_IMAGES)}{digit}*"
            f"(?:{sep}{version})*(?:-{alternatives(STATEFUL_SUFFIXES)}(?:{sep}{version})*)?")


@functools.cache
def _stateful() -> re.Pattern[str]:
    """The grammar compiled (on first use: compiling it costs about 6 M instructions)."""
    return re.compile(stateful_name_pattern(re.escape, "[a-z]", "[0-9]"))


def stateful_image(image: str) -> bool:
    """``docker.io/bitnami/postgresql:16`` -> True, ``sclorg/mysql-80-c9s`` -> True,
    ``redis7`` -> True; ``danielqsj/kafka-exporter`` -> False."""
    name = image_name(image)
    # the grammar holds one of the names as written: without any, no need to ask it
    return any(known in name for known in STATEFUL_IMAGES) and \
        _stateful().fullmatch(name) is not None
