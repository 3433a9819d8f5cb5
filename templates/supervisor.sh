# pmanifest termination supervisor (POSIX sh: dash, bash, busybox sh), the container's PID 1:
#   /bin/sh -c SCRIPT pmanifest-supervisor MODE DEADLINE N CHECKPOINT_ARGV(N items) MAIN_ARGV...
# Every argument arrives as a positional parameter and is never evaluated. The main runs in
# the background until SIGTERM; then, by MODE:
#   signal   TERM the main's processes (their own handler checkpoints), wait for them
#   command  run CHECKPOINT_ARGV once, then TERM the main's processes, wait for them
#   prestop  the preStop hook has checkpointed already: TERM the main's processes, wait
#   none     no checkpoint: TERM the main's processes, wait
# "The main's processes": as PID 1, the main's process group, i.e. every process of the
# container in this shell's process group (field 5 of /proc/PID/stat; a launcher such as
# `bash train.sh` and what it started), or in the main's own when the main made one (setsid),
# except this shell and its watchdog. A process that made its own process group or session
# (torchrun's workers: start_new_session) is its parent's business: the parent got the TERM and
# forwards it, so its handler runs once. Not as PID 1 (a pod with shareProcessNamespace), the
# main alone: once a launcher is gone, what it started is no longer this shell's descendant, so
# a wider set could not be waited for.
# DEADLINE, in seconds after SIGTERM: whatever still runs then (main, what it started in any
# process group, the checkpoint) is SIGKILLed. pmanifest render passes gracePeriodSeconds -
# marginSeconds, and marginSeconds for prestop (the hook has used its share of the grace
# period), so this shell has exited when the kubelet's SIGKILL comes.
# A TERM is acted on from inside its trap: one arriving between the main's start and `wait`
# is not left for a `wait` that would block until the main exits by itself. (Under dash and
# busybox, a TERM passed on within the instant after the main's fork, before the forked shell
# has dropped the handler it inherited, is lost: the deadline then ends the main, 143 as ever.)
# The main and the checkpoint start with SIGTERM at its default action and SIGINT, SIGQUIT
# ignored (POSIX for background commands; dash and busybox do not let a script undo it).
# Exit status:
#   143   SIGTERM received (a preemption): the status the Job's podFailurePolicy ignores
#   43    the main exited 143 (killed by a SIGTERM) although this shell got none: a real
#         failure, counted against backoffLimit (143 would make the Job retry it forever)
#   2     bad arguments (a hand-edited manifest)
#   else  the main's own status, when it exits before a SIGTERM reaches this shell
# shellcheck disable=SC2329 # the functions run from the TERM trap (pm_preempt)
trap 'exit 143' TERM  # first statement: a TERM before the main has started ends here
pm_mode=$1 pm_deadline=$2 pm_n=$3
case $pm_mode in signal | command | prestop | none) ;; *) pm_mode= ;; esac
case $pm_deadline in '' | *[!0-9]*) pm_mode= ;; esac
case $pm_n in '' | *[!0-9]*) pm_mode= ;; esac
if [ -z "$pm_mode" ] || [ "$#" -le $((pm_n + 3)) ]; then
  echo "pmanifest-supervisor: usage: MODE DEADLINE N CHECKPOINT_ARGV... MAIN_ARGV..." >&2
  exit 2
fi
shift 3
pm_ckpt='' pm_watchdog='' pm_line=''
pm_fields() {  # $1: a /proc/PID/stat line; sets pm_pid, pm_state, pm_ppid, pm_pgrp
  pm_pid=${1%% *}
  # shellcheck disable=SC2086 # split "STATE PPID PGRP ...", the fields after "PID (COMM) "
  set -- ${1##*) }
  pm_state=$1 pm_ppid=$2 pm_pgrp=$3
}
# this shell's PID and process group, read from /proc: a kubelet turns a double dollar in
# command/args into one. (Inside a PID namespace whose PID 1 is in a process group led from
# outside, the group reads as 0; it is the same 0 for every process that inherited it.)
{ read -r pm_line </proc/self/stat; } 2>/dev/null
pm_fields "${pm_line:-0 (?) ? 0 0}"
pm_self=$pm_pid pm_group=$pm_pgrp
pm_signal() {  # $1: TERM or KILL; to the main's processes (see above), never to this shell
  if [ "$pm_self" != 1 ]; then
    kill -"$1" "$pm_child" ${pm_ckpt:+"$pm_ckpt"} 2>/dev/null
  elif [ "$1" = KILL ]; then
    kill -KILL -1 2>/dev/null  # every process but PID 1 (and the caller): we are exiting
  else
    for pm_stat in /proc/[0-9]*/stat; do
      read -r pm_line 2>/dev/null <"$pm_stat" || continue
      pm_fields "$pm_line"
      case $pm_pid in 1 | "$pm_watchdog") continue ;; esac
      case $pm_pgrp in "$pm_group" | "$pm_child") ;; *) continue ;; esac
      [ "$pm_ppid" = "$pm_watchdog" ] || kill -TERM "$pm_pid" 2>/dev/null
    done
  fi
}
pm_busy() {  # as PID 1: does a process other than this shell and the watchdog still run?
  for pm_stat in /proc/[0-9]*/stat; do
    case $pm_stat in /proc/1/stat | "/proc/$pm_watchdog/stat") continue ;; esac
    read -r pm_line 2>/dev/null <"$pm_stat" || continue
    pm_fields "$pm_line"
    [ "$pm_state" = Z ] || [ "$pm_ppid" = "$pm_watchdog" ] || return 0
  done
  return 1
}
pm_preempt() {  # the TERM trap once the main may run ("$@": the script's parameters); exits
  trap '' TERM  # further TERMs are ignored (the checkpoint runs once), also by the watchdog
  pm_child=$!
  [ -n "$pm_child" ] || exit 143  # the main has not started: nothing to stop
  echo "pmanifest-supervisor: SIGTERM received; mode $pm_mode, deadline ${pm_deadline}s" >&2
  if [ "$pm_mode" = command ]; then
    (  # the checkpoint: keep the first $pm_n parameters and run them
      trap '' INT QUIT
      trap - TERM
      pm_i=0 pm_total=$#
      while [ "$pm_i" -lt "$pm_total" ]; do
        [ "$pm_i" -ge "$pm_n" ] || set -- "$@" "$1"
        shift
        pm_i=$((pm_i + 1))
      done
      exec "$@"
    ) &
    pm_ckpt=$!
  fi
  (sleep "$pm_deadline"; echo "pmanifest-supervisor: deadline reached; SIGKILL" >&2; pm_signal KILL) &
  pm_watchdog=$!
  if [ -n "$pm_ckpt" ]; then
    wait "$pm_ckpt" || echo "pmanifest-supervisor: checkpoint command failed with status $?" >&2
    pm_ckpt=
  fi
  pm_signal TERM
  wait "$pm_child"
  pm_tick=0.2  # as PID 1, wait for what the main left running too (a launcher's trainer)
  while [ "$pm_self" = 1 ] && kill -0 "$pm_watchdog" 2>/dev/null && pm_busy; do
    sleep "$pm_tick" 2>/dev/null || pm_tick=1  # whole seconds where fractions are refused
  done
  pm_child=$pm_watchdog
  pm_signal KILL  # the watchdog, and as PID 1 whatever is left
  exit 143
}
trap 'pm_preempt "$@"' TERM  # from here on a TERM is acted on in the trap, wherever it comes
(trap - TERM; trap '' INT QUIT; shift "$pm_n"; exec "$@") &  # the main
wait "$!"  # returns when the main exits (a TERM runs pm_preempt, which does not return)
pm_status=$?
trap '' TERM  # the main exited by itself: its status is the outcome
[ "$pm_self" != 1 ] || kill -KILL -1 2>/dev/null  # what it left running ends with it
if [ "$pm_status" = 143 ]; then
  echo "pmanifest-supervisor: the main process exited 143 (SIGTERM) without a" \
    "preemption; exiting 43 so that the failure counts" >&2
  exit 43
fi
exit "$pm_status"
