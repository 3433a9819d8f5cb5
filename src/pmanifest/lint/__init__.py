"""The lint engine: inputs (``sources``, ``kustomize``, ``gitignored``), the run over documents
and rules (``engine``, ``parallel``), suppression, configuration, patch fragments, the
whole-input cluster side (``cluster``), the gate that refuses an empty run, the progress bar,
the baseline (``baseline``) and fixes written into the text (``fixes``, ``fixplace``).

May import ``rules``, ``policy``, ``cluster``, ``kube``, ``shell``, ``schema``, ``loader`` and
``io``; never ``render`` or ``cli``.
"""
