"""Render: a pmanifest spec (``spec``) becomes Kubernetes objects through the Jinja2 templates
(``engine``, ``templates``, ``context``, ``distributed``, ``runtime``), run in a bounded
sandbox (``sandbox``), with the built-in templates precompiled (``builtin``, ``precompile``);
``output`` says where the result goes.

May import ``kube``, ``schema``, ``loader``, ``io`` and ``cluster``'s request model; never the
lint engine or the rules, by any path (render warnings are composed in ``cli``).
"""
