"""Schemas: the Kubernetes schemas of each version (``kubernetes``) with the compiled yes/no
check (``fast``), the CRD schemas shipped for custom kinds (``crd``), error wording for every
JSON Schema failure (``words``), linear-time patterns for untrusted schemas (``regex``), and
the YAML data files shipped in policies/ validated against their schemas (``datafile``).

May import ``loader`` and ``io``; nothing above.
"""
