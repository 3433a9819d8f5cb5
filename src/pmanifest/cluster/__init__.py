"""The cluster side: cluster requests and reads (``request``), preemption events and their
history (``events``, ``history``, ``report``, ``timeline``), checkpoint interval arithmetic,
and the GPU capacity model (``demand``, ``capacity``, ``packing``, ``gpu_nodes``).

May import ``kube``, ``schema``, ``loader`` and ``io``; never ``rules``, ``lint``, ``render``
or ``cli``.
"""
