"""Checkpoint sizing against preemption: Young's and Daly's intervals and the GPU time lost.

A job that spans N preemptible nodes is interrupted when any one of them is preempted. With
independent preemptions at a per-node mean time between preemptions M, the job's mean time
between interruptions is M / N.

Young's (1974) first-order optimum for the periodic checkpoint interval (work done between two
checkpoints) is sqrt(2 C M_job) for a checkpoint that takes C seconds. Daly's (2006)
higher-order estimate, for the exponential model below, is
sqrt(2 C M) (1 + sqrt(C / 2M) / 3 + C / 18M) - C while C < 2M, and M beyond; it is the one
reports recommend (it never loses more than Young's; property tests hold both near the
model's optimum while C <= M_job / 2).

The fraction of GPU time lost at an interval t uses Daly's exponential model with no restart
time: a segment of t seconds of work plus its C-second checkpoint completes without an
interruption with probability exp(-(t + C) / M_job), and the expected wall time spent per
completed segment is M_job * (exp((t + C) / M_job) - 1). The useful share is t divided by that;
the rest (checkpoint overhead plus work done again) is lost. It stays within [0, 1] at every
edge, and is close to sqrt(2 C / M_job) at Young's interval while C << M_job.

Every time is in seconds; math.inf stands for "no interruption expected".
"""

from __future__ import annotations

import math

# Together's documented sizing reference: a checkpoint of a ~10B-parameter model takes ~90 s.
DOCUMENTED_CHECKPOINT_SECONDS = 90.0

_EXP_LIMIT = 700.0  # exp() of more overflows a float; the useful share is 0 long before


def job_mean_time(per_node: float, nodes: int) -> float:
    """Mean time between interruptions of a job on ``nodes`` preemptible nodes."""
    if nodes < 1:
        raise ValueError("a job spans at least one node")
    if per_node < 0 or math.isnan(per_node):
        raise ValueError("a mean time between preemptions is not negative")
    return per_node / nodes


def young_interval(checkpoint: float, mean_time: float) -> float:
    """sqrt(2 C M): the periodic checkpoint interval that minimises expected lost work."""
    _check(checkpoint, mean_time)
    if math.isinf(mean_time):
        return math.inf if checkpoint > 0 else 0.0
    return math.sqrt(2.0 * checkpoint * mean_time)


def daly_interval(checkpoint: float, mean_time: float) -> float:
    """Daly's higher-order optimum of the periodic checkpoint interval (restart time 0)."""
    _check(checkpoint, mean_time)
    if math.isinf(mean_time):
        return math.inf if checkpoint > 0 else 0.0
    if checkpoint >= 2.0 * mean_time:
        return mean_time
    ratio = checkpoint / (2.0 * mean_time)
    young = math.sqrt(2.0 * checkpoint * mean_time)
    return max(0.0, young * (1.0 + math.sqrt(ratio) / 3.0 + ratio / 9.0) - checkpoint)


def lost_fraction(interval: float, checkpoint: float, mean_time: float) -> float:
    """Expected share of GPU time lost to checkpoints and re-done work (0 to 1)."""
    _check(checkpoint, mean_time)
    if interval < 0 or math.isnan(interval):
        raise ValueError("an interval is not negative")
    if math.isinf(interval):
        return 0.0 if math.isinf(mean_time) else 1.0
    if math.isinf(mean_time):  # never interrupted: only the checkpoints cost anything
        return checkpoint / (interval + checkpoint) if checkpoint > 0 else 0.0
    if mean_time == 0.0:
        return 1.0
    exponent = (interval + checkpoint) / mean_time
    if exponent == 0.0:
        return 0.0  # no work, no checkpoint: nothing to lose
    if exponent > _EXP_LIMIT:
        return 1.0
    useful = interval / (mean_time * math.expm1(exponent))
    return min(1.0, max(0.0, 1.0 - useful))


def _check(checkpoint: float, mean_time: float) -> None:
    if checkpoint < 0 or math.isnan(checkpoint) or math.isinf(checkpoint):
        raise ValueError("a checkpoint duration is a finite number of seconds, not negative")
    if mean_time < 0 or math.isnan(mean_time):
        raise ValueError("a mean time between interruptions is not negative")
