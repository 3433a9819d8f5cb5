"""Kubernetes as pmanifest reads it: objects and findings (``document``), the preemption
contract's numbers (``contract``), the table of workload kinds (``kinds``), pod templates and
the workloads they make (``podtemplates``, ``workloads``), placement, provider profiles, and
what a kustomization fills in (``kustomized``).

May import ``schema``, ``loader`` and ``io``; nothing above.
"""
