"""The lint engine: inputs (``sources``, ``kustomize``, ``gitignored``), the run over documents
and rules (``engine``, ``parallel``), suppression, configuration, patch fragments, the
whole-input cluster side (``cluster``), the gate that refuses an empty run, the progress bar,
the baseline (``baseline``), fixes written into the text (``fixes``, ``fixplace``) and a
run's findings held packed until its reports are written (``stored``).

May import ``rules``, ``policy``, ``cluster``, ``kube``, ``shell``, ``schema``, ``loader`` and
``io``; never ``render`` or ``cli``.
"""
