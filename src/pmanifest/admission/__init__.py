"""Export of the built-in rules as Kubernetes ValidatingAdmissionPolicies
(``pmanifest export admission``): the API server enforces the same contract lint checks, on
every object it admits, in CEL.

This package owns the CEL that restates what lint decides (:mod:`.placement`: where a pod can
run; :mod:`.kinds`: the pod templates of the kinds it covers and their roles; :mod:`.rules`:
one policy per exportable rule, and why the others are lint only) and the YAML stream of
policies and bindings (:mod:`.export`). It reads the rule catalogue, the profiles, the config,
the workload kinds table and the contract constants; it never imports the lint engine or the
rules' checks (tests prove the verdicts equal, the code does not share them), and nothing on
lint's path imports it.
"""
