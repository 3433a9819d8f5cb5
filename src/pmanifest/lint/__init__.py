"""The lint engine: inputs (``sources``, ``kustomize``), the run over documents and rules
(``engine``, ``parallel``), suppression, configuration, patch fragments, the whole-input
cluster side (``cluster``), the gate that refuses an empty run, and the progress bar.

May import ``rules``, ``policy``, ``cluster``, ``kube``, ``shell``, ``schema``, ``loader`` and
``io``; never ``render`` or ``cli``.
"""
