"""What a node event says, provider by provider: every event reason ``cluster events`` reads,
what it means for a node's history, and where each comes from (the providers' own code and
documentation, named beside each group).

- ``PREEMPTION``: the provider reclaims the node (its notice): counted;
- ``SHUTDOWN``: the kubelet shuts the node down gracefully. It is the only sign a GKE Spot VM's
  preemption leaves among Kubernetes events, and a maintenance or a node deleted by hand looks
  the same: counted as a preemption when no removal (a scale-down) came first;
- ``JOINED``: the node joined the cluster (its observation starts);
- ``ENDED``: the node left without a preemption (scaled down, removed, deleted, stopped, or
  terminated after an interruption of another kind): its observation ends, nothing counted;
- ``OTHER``: about the node, not its life (readiness, pressure, a risk notice): kept out.

Events about a Karpenter NodeClaim are the same as its Node's (Karpenter emits both), events
about Pods on an interrupted node repeat the node's; both are counted in the report, not as
preemptions. A reason in none of these tables is counted and reported as not understood.
"""

from __future__ import annotations

PREEMPTION, SHUTDOWN, JOINED, ENDED, OTHER = "preemption", "shutdown", "joined", "ended", "other"

REASONS: dict[str, str] = {
    # Together: the preemption notice on the Node at T+0 (a Warning), and the cluster read's
    # node_lifecycle_events (docs.together.ai, preemptible compute)
    "TogetherPreemptionNotified": PREEMPTION,
    "TogetherNodeAdded": JOINED,
    "TogetherScaledDown": ENDED,
    # Karpenter on AWS (aws/karpenter-provider-aws,
    # pkg/controllers/interruption/events/events.go): SpotInterrupted (Warning) on the
    # NodeClaim, the Node and every Pod on it at the 2-minute notice; TerminatingOnInterruption
    # once any interruption (spot, a stop, a termination, a scheduled change) makes Karpenter
    # delete the node; InstanceStopping and InstanceTerminating from EC2's state changes;
    # InstanceUnhealthy from AWS Health; SpotRebalanceRecommendation, a raised risk, no notice
    "SpotInterrupted": PREEMPTION,
    "TerminatingOnInterruption": ENDED,
    "InstanceStopping": ENDED,
    "InstanceTerminating": ENDED,
    "InstanceUnhealthy": OTHER,
    "SpotRebalanceRecommendation": OTHER,
    # Karpenter's own disruption (kubernetes-sigs/karpenter, pkg/events/reason.go and
    # pkg/controllers/disruption/events/events.go): DisruptionTerminating, "Disrupting Node:
    # Drift|Empty|Underutilized|Expired", is Karpenter removing the node itself
    "DisruptionTerminating": ENDED,
    "DisruptionLaunching": OTHER,
    "DisruptionWaitingReadiness": OTHER,
    "DisruptionBlocked": OTHER,
    "Unconsolidatable": OTHER,
    "ConsolidationCandidate": OTHER,
    "ConsolidationRejected": OTHER,
    "NodeRepairBlocked": OTHER,
    "Disrupted": OTHER,
    "Evicted": OTHER,
    "FailedDraining": OTHER,
    "TerminationGracePeriodExpiring": OTHER,
    "FailedTermination": OTHER,
    # AKS: node-problem-detector's events from Azure Scheduled Events
    # (learn.microsoft.com/azure/aks/node-problem-detector): PreemptScheduled when a Spot VM
    # is to be evicted (node auto-drain then cordons and drains it:
    # learn.microsoft.com/azure/aks/node-auto-drain); TerminateScheduled, the VM is to be
    # deleted; Reboot, Redeploy and Freeze bring the node back
    "PreemptScheduled": PREEMPTION,
    "TerminateScheduled": ENDED,
    "RebootScheduled": OTHER,
    "RedeployScheduled": OTHER,
    "FreezeScheduled": OTHER,
    # the kubelet's graceful node shutdown (kubernetes/kubernetes, pkg/kubelet/events/event.go:
    # NodeShutdown = "Shutdown", "Shutdown manager detected shutdown event"): on GKE a Spot
    # VM's preemption notice starts it (cloud.google.com/kubernetes-engine/docs/concepts/
    # spot-vms: "Termination and graceful shutdown of Spot VMs")
    "Shutdown": SHUTDOWN,
    # Kubernetes' node lifecycle (node and cloud-node-lifecycle controllers) and the cluster
    # autoscaler (ScaleDown: "node removed by cluster autoscaler"), on every provider
    "RegisteredNode": JOINED,
    "RemovingNode": ENDED,
    "DeletingNode": ENDED,
    "ScaleDown": ENDED,
    # the kubelet's and node controller's everyday node events
    "Starting": OTHER,
    "Rebooted": OTHER,
    "NodeReady": OTHER,
    "NodeNotReady": OTHER,
    "NodeSchedulable": OTHER,
    "NodeNotSchedulable": OTHER,
    "NodeHasSufficientMemory": OTHER,
    "NodeHasInsufficientMemory": OTHER,
    "NodeHasNoDiskPressure": OTHER,
    "NodeHasDiskPressure": OTHER,
    "NodeHasSufficientPID": OTHER,
    "NodeHasInsufficientPID": OTHER,
    "NodeAllocatableEnforced": OTHER,
    "InvalidDiskCapacity": OTHER,
}
NODE_CLAIM = "NodeClaim"  # Karpenter's (karpenter.sh): the same interruption as its Node's


def kind_of(reason: str) -> str | None:
    """What ``reason`` says of a node, None when pmanifest does not know it."""
    return REASONS.get(reason)
