# pmanifest termination supervisor (POSIX sh: dash, bash, busybox sh), the container's PID 1:
#   /bin/sh -c SCRIPT pmanifest-supervisor MODE DEADLINE N CHECKPOINT_ARGV(N items) MAIN_ARGV...
# Every argument arrives as a positional parameter and is never evaluated. The main runs in
# the background until SIGTERM; then, by MODE:
#   signal   TERM the main's processes (their own handler checkpoints), wait for them
#   command  run CHECKPOINT_ARGV once, then TERM the main's processes, wait for them
#   prestop  the preStop hook has checkpointed already: TERM the main's processes, wait
#   none     no checkpoint: TERM the main's processes, wait
# "The main's processes": as PID 1, every other process of the container (kill -1 reaches
# what a launcher started, whatever its process group); not as PID 1, the main alone.
# DEADLINE, in seconds after SIGTERM: whatever still runs then (main, what it started, the
# checkpoint) is SIGKILLed. pmanifest render passes gracePeriodSeconds - marginSeconds, and
# marginSeconds for prestop (the hook has used its share of the grace period), so this
# shell has exited when the kubelet's SIGKILL comes.
# The main and the checkpoint start with SIGTERM at its default action and SIGINT, SIGQUIT
# ignored (POSIX for background commands; dash and busybox do not let a script undo it).
# Exit status:
#   143   SIGTERM received (a preemption): the status the Job's podFailurePolicy ignores
#   43    the main exited 143 (killed by a SIGTERM) although this shell got none: a real
#         failure, counted against backoffLimit (143 would make the Job retry it forever)
#   2     bad arguments (a hand-edited manifest)
#   else  the main's own status, when it exits before this shell acts on a SIGTERM
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
pm_ckpt=
# this shell's PID, read from /proc: a kubelet turns a double dollar in command/args into one
pm_self=0
{ read -r pm_self _ </proc/self/stat; } 2>/dev/null
pm_signal() {  # $1: signal name; to the main's processes (see above), never to this shell
  if [ "$pm_self" = 1 ]; then
    kill -"$1" -1 2>/dev/null
  else
    kill -"$1" "$pm_child" ${pm_ckpt:+"$pm_ckpt"} 2>/dev/null
  fi
}
pm_busy() {  # as PID 1: does a process other than this shell and the watchdog still run?
  for pm_stat in /proc/[0-9]*/stat; do
    case $pm_stat in /proc/1/stat | "/proc/$pm_watchdog/stat") continue ;; esac
    read -r pm_line 2>/dev/null <"$pm_stat" || continue
    # shellcheck disable=SC2086 # split "STATE PPID ...", the fields after "PID (COMM) "
    set -- ${pm_line##*) }
    [ "$1" = Z ] || [ "$2" = "$pm_watchdog" ] || return 0
  done
  return 1
}
pm_term=
trap 'pm_term=1' TERM  # from here on a TERM sets the flag; it is acted on below
[ -z "$pm_term" ] || exit 143
(trap '' INT QUIT; trap - TERM; shift "$pm_n"; exec "$@") &  # the main
pm_child=$!
wait "$pm_child"  # returns when the main exits or a TERM arrives
pm_status=$?
if [ -z "$pm_term" ] || ! kill -0 "$pm_child" 2>/dev/null; then  # the main exited by itself
  [ "$pm_self" != 1 ] || kill -KILL -1 2>/dev/null  # what it left running ends with it
  if [ "$pm_status" = 143 ]; then
    echo "pmanifest-supervisor: the main process exited 143 (SIGTERM) without a" \
      "preemption; exiting 43 so that the failure counts" >&2
    exit 43
  fi
  exit "$pm_status"
fi
trap '' TERM  # further TERMs are ignored (the checkpoint runs once), also by the watchdog
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
