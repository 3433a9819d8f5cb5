"""pmanifest: preemption-aware Kubernetes manifests for GPU clusters."""

from __future__ import annotations

__version__ = "0.1.0"
