"""Kubernetes as pmanifest reads it: objects and findings (``document``), the preemption
contract's numbers (``contract``), the table of workload kinds (``kinds``), pod templates and
the workloads they make (``podtemplates``, ``workloads``), placement, and provider profiles.

May import ``schema``, ``loader`` and ``io``; nothing above.
"""
