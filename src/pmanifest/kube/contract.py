"""The preemption contract and Kubernetes facts, each stated once (DESIGN.md, section 1).

Render writes these numbers into manifests and lint checks manifests against them, so both
sides import them from here; nothing else spells them out.
"""

from __future__ import annotations

SIGTERM_EXIT = 143  # 128 + SIGTERM: what a preempted pod's handler exits with (never 0)
# what pmanifest's termination supervisor exits with when its main dies of a SIGTERM that was
# no preemption (templates/supervisor.sh): a failure, so no podFailurePolicy may ignore it
UNEXPECTED_TERM_EXIT = 43
# $0 of the supervisor in a rendered container (sh -c SCRIPT pmanifest-supervisor MODE ...), and
# its MODE for a workload without a checkpoint (its TERM handler only stops the main)
SUPERVISOR_NAME = "pmanifest-supervisor"
SUPERVISOR_NO_CHECKPOINT = "none"
SUPERVISOR_AFTER_HOOK = "prestop"  # MODE with a preStop checkpoint: the handler only stops it
# how long before the end of the grace period the termination supervisor stops everything
# (checkpoint.marginSeconds' default): a checkpoint at the notice gets the grace period less this
SUPERVISOR_MARGIN_SECONDS = 10
DISRUPTION_TARGET = "DisruptionTarget"  # the pod condition a drain or eviction sets
KUBERNETES_DEFAULT_GRACE = 30  # terminationGracePeriodSeconds when a pod does not set it
ROLE_LABEL = "pmanifest.io/role"  # label (or annotation) that declares a workload's role
# the roles a spec or the role label can give
WORKER_ROLE, COORDINATOR_ROLE, SERVING_ROLE = "worker", "coordinator", "serving"
ROLES = (WORKER_ROLE, COORDINATOR_ROLE, SERVING_ROLE)
DAEMON_ROLE = "daemon"  # DaemonSets: on every node by design
# a pod template whose role neither the table nor what it runs tells (kube/roles.py): only
# the rules that hold for every role check it
UNKNOWN_ROLE = "unknown"
