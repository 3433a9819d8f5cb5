"""The JSON Schema of the run-time fields (issue 14): env from Secrets, ConfigMaps and the
downward API, envFrom, probes, the serving rollout, annotations, priorityClassName and the
Job knobs of workers. Kubernetes' own field names throughout, so its documentation applies."""

from __future__ import annotations

from typing import Any

from pmanifest.render.spec.model import DNS1123_SUBDOMAIN
from pmanifest.render.spec.runtime import (
    ENV_FROM_SOURCES,
    ENV_SOURCES,
    PROBE_HANDLERS,
    PROBE_KINDS,
    SCARCE_ROLLOUT,
    STRATEGY_TYPES,
)
from pmanifest.render.spec.schema_parts import (
    ARGV_ITEM,
    INT32_MAX,
    QUANTITY_VALUE,
    STRING_MAP,
    SUBDOMAIN,
    closed,
    count,
    field,
    one_of_keys,
)

ENV_KEY = r"^[-._a-zA-Z0-9]+$"  # a key of a Secret or ConfigMap
FIELD_PATHS = (r"^(metadata\.(name|namespace|uid)|metadata\.(labels|annotations)\['[^']+'\]|"
               r"spec\.(nodeName|serviceAccountName)|status\.(hostIP|podIP|podIPs))$")
RESOURCE_FIELDS = ["limits.cpu", "limits.memory", "limits.ephemeral-storage", "requests.cpu",
                   "requests.memory", "requests.ephemeral-storage"]
PERCENT_OR_COUNT = {"type": ["integer", "string"], "minimum": 0, "maximum": INT32_MAX,
                    "pattern": "^[0-9]+%$"}


def _named(what: str) -> dict[str, Any]:
    return field(SUBDOMAIN, f"Name of the {what} (DNS-1123 subdomain), in the workload's "
                 "namespace.")


def _key_ref(what: str) -> dict[str, Any]:
    return field(closed({
        "name": _named(what),
        "key": field({"type": "string", "maxLength": 253, "pattern": ENV_KEY},
                     f"The key of the {what} whose value the variable gets."),
        "optional": field({"type": "boolean"}, f"Start the container even if the {what} or "
                          "the key does not exist (the variable is then unset).", False),
    }, ("name", "key")), f"The value of one key of a {what}: {{name, key}}.")


def env_value_schema() -> dict[str, Any]:
    """A plain value, or exactly one of the sources Kubernetes reads at run time."""
    return {
        "type": ["string", "integer", "object"],
        "description": "A value (quote anything that is not a string or an integer), or one "
                       "source read when the container starts: secretKeyRef, configMapKeyRef, "
                       "fieldRef or resourceFieldRef.",
        "additionalProperties": False,
        "properties": {
            "secretKeyRef": _key_ref("Secret"),
            "configMapKeyRef": _key_ref("ConfigMap"),
            "fieldRef": field(closed({
                "fieldPath": field({"type": "string", "pattern": FIELD_PATHS},
                                   "metadata.name, metadata.namespace, metadata.uid, "
                                   "metadata.labels['KEY'], metadata.annotations['KEY'], "
                                   "spec.nodeName, spec.serviceAccountName, status.hostIP, "
                                   "status.podIP or status.podIPs."),
                "apiVersion": field({"const": "v1"}, "Version of the field path's schema.",
                                    "v1"),
            }, ("fieldPath",)), "A field of the pod (downward API): {fieldPath: "
                                "metadata.namespace}."),
            "resourceFieldRef": field(closed({
                "resource": field({"enum": RESOURCE_FIELDS}, "Which request or limit of the "
                                  "main container, e.g. limits.memory."),
                "divisor": field(QUANTITY_VALUE,
                                 "Unit the value is expressed in, e.g. 1Mi or 1m.", "1"),
            }, ("resource",)), "A resource request or limit of the main container: "
                               "{resource: limits.cpu}."),
        },
        "if": {"type": "object"},
        "then": {"oneOf": one_of_keys(list(ENV_SOURCES))},
    }


def _env_from_schema() -> dict[str, Any]:
    def ref(what: str) -> dict[str, Any]:
        return field(closed({
            "name": _named(what),
            "optional": field({"type": "boolean"}, f"Start even if the {what} does not "
                              "exist.", False),
        }, ("name",)), f"Every key of a {what} becomes a variable: {{name}}.")

    item = closed({
        "secretRef": ref("Secret"),
        "configMapRef": ref("ConfigMap"),
        "prefix": field({"type": "string", "pattern": r"^([-._a-zA-Z][-._a-zA-Z0-9]*)?$"},
                        "Prepended to every variable name, e.g. HF_.", ""),
    })
    item["oneOf"] = one_of_keys(ENV_FROM_SOURCES)
    item["description"] = ("Variables from all keys of one Secret (secretRef) or ConfigMap "
                           "(configMapRef); env entries win over them.")
    return field({"type": "array", "items": item},
                 "Whole Secrets or ConfigMaps as environment variables, in order (a workload's "
                 "list is appended to the one in defaults).", [])


def runtime_shared_fields() -> dict[str, Any]:
    """Run-time fields allowed both in ``defaults`` and on a workload."""
    return {
        "env": field({"type": "object", "additionalProperties": env_value_schema()},
                     "Environment variables of the main container, name -> value, or name -> "
                     "{secretKeyRef: {name, key}} (also configMapKeyRef, fieldRef, "
                     "resourceFieldRef). A workload's entries win over those in defaults.",
                     {}),
        "envFrom": _env_from_schema(),
        "annotations": field(STRING_MAP, "Annotations on every object of the workload (Job, "
                             "Deployment, Service, PodDisruptionBudget); a workload's win over "
                             "defaults. pmanifest.io/ignore: PM302 silences a rule in lint "
                             "and render alike.", {}),
        "podAnnotations": field(STRING_MAP, "Annotations on the pod template (e.g. for log "
                                "collectors or service meshes); a workload's win over "
                                "defaults.", {}),
        "priorityClassName": field({"type": "string", "maxLength": 253,
                                    "pattern": DNS1123_SUBDOMAIN.pattern},
                                   "PriorityClass of the pods (it must exist in the cluster); "
                                   "omitted means the cluster's default priority."),
    }


def _probe_schema(kind: str, extra: str) -> dict[str, Any]:
    def seconds(minimum: int, default: int, what: str) -> dict[str, Any]:
        return field(count(minimum), what, default)

    port = field({"type": "integer", "minimum": 1, "maximum": 65535},
                 "Port of the main container to probe.")
    schema = closed({
        "httpGet": field(closed({
            "path": field({"type": "string", "pattern": "^/"}, "HTTP path, e.g. /health.",
                          "/"),
            "port": port,
            "scheme": field({"enum": ["HTTP", "HTTPS"]}, "HTTP or HTTPS (certificates are "
                            "not verified).", "HTTP"),
            "httpHeaders": field({"type": "array", "items": closed({
                "name": field({"type": "string", "minLength": 1}, "Header name."),
                "value": field({"type": "string"}, "Header value.", ""),
            }, ("name", "value"))}, "Extra request headers.", []),
        }, ("port",)), "Success is a status from 200 to 399."),
        "tcpSocket": field(closed({"port": port}, ("port",)),
                           "Success is an open TCP connection."),
        "exec": field(closed({
            "command": field({"type": ["array", "string"], "items": ARGV_ITEM, "minItems": 1,
                              "minLength": 1},
                             "Run in the container: an argv list, or a string run by "
                             "/bin/sh -c."),
        }, ("command",)), "Success is exit status 0."),
        "grpc": field(closed({
            "port": port,
            "service": field({"type": "string"}, "Service name of the gRPC health check.",
                             ""),
        }, ("port",)), "Success is SERVING from the gRPC health checking protocol."),
        "initialDelaySeconds": seconds(0, 0, "Seconds after the start before the first "
                                       "probe."),
        "periodSeconds": seconds(1, 10, "Seconds between probes."),
        "timeoutSeconds": seconds(1, 1, "Seconds a probe may take."),
        "successThreshold": seconds(1, 1, "Consecutive successes that count as passing "
                                    "(must be 1 for liveness and startup)."),
        "failureThreshold": seconds(1, 3, "Consecutive failures that count as failing."),
    })
    schema["oneOf"] = one_of_keys(PROBE_HANDLERS)
    return field(schema, f"The {PROBE_KINDS[kind]} of the main container: exactly one of "
                 f"httpGet, tcpSocket, exec, grpc, plus timing. {extra}")


def _strategy_schema() -> dict[str, Any]:
    return field(closed({
        "type": field({"enum": list(STRATEGY_TYPES)}, "RollingUpdate replaces replicas a "
                      "few at a time; Recreate stops all of them first.", "RollingUpdate"),
        "maxSurge": field(PERCENT_OR_COUNT, "Pods above replicas during a rollout (a count "
                          "or a percentage such as 25%). Omitted: 0 with two or more "
                          "replicas (no spare GPU node needed), 1 with one replica.",
                          SCARCE_ROLLOUT["maxSurge"]),
        "maxUnavailable": field(PERCENT_OR_COUNT, "Replicas that may be down during a "
                                "rollout. Omitted: 1 with two or more replicas (as the "
                                "PodDisruptionBudget allows), 0 with one replica.",
                                SCARCE_ROLLOUT["maxUnavailable"]),
    }), "Rollout of a serving Deployment. The default suits scarce GPUs: with two or more "
        "replicas, one replica at a time and no surge pod (maxSurge: 0, maxUnavailable: 1); "
        "with one replica, Kubernetes' own (maxSurge: 1, maxUnavailable: 0). Coordinators "
        "always use Recreate.", {"type": "RollingUpdate", **SCARCE_ROLLOUT})


def runtime_workload_fields() -> dict[str, Any]:
    """Run-time fields of one workload."""
    return {
        "probes": field(closed({
            "readiness": _probe_schema("readiness", "Until it passes, the pod gets no "
                                       "Service traffic and counts as unavailable for "
                                       "rollouts and the PodDisruptionBudget (coordinator and "
                                       "serving only)."),
            "liveness": _probe_schema("liveness", "When it fails, the kubelet restarts the "
                                      "container."),
            "startup": _probe_schema("startup", "Holds back the other probes until it passes: "
                                     "give a model time to load (periodSeconds x "
                                     "failureThreshold)."),
        }), "Health probes of the main container.", {}),
        "strategy": _strategy_schema(),
        "ttlSecondsAfterFinished": field(count(0),
                                         "Delete the finished Job (and its pods) this many "
                                         "seconds after it ends (worker only); omitted means "
                                         "kept until deleted."),
        "backoffLimitPerIndex": field(count(0),
                                      "Retries per index of an Indexed Job (worker with "
                                      "completions; Kubernetes 1.29 or later): a failing shard "
                                      "no longer uses up the retries of the others. Without "
                                      "backoffLimit, the Job then has no global limit. "
                                      "Omitted means one limit for the whole Job."),
        "maxFailedIndexes": field(count(0),
                                  "Fail the whole Job once more indexes than this have failed "
                                  "(needs backoffLimitPerIndex; at most completions); omitted "
                                  "means every index is tried to its limit."),
    }
