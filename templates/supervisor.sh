# pmanifest termination supervisor (POSIX sh: dash, bash, busybox sh), the container's PID 1:
#   /bin/sh -c SCRIPT pmanifest-supervisor MODE DEADLINE N CHECKPOINT_ARGV(N items) MAIN_ARGV...
# Every argument arrives as a positional parameter and is never evaluated. The main runs in
# the background until the pod is terminated; then, by MODE:
#   signal   TERM the main's processes (their own handler checkpoints), wait for them
#   command  run CHECKPOINT_ARGV once, then TERM the main's processes, wait for them
#   prestop  the preStop hook has checkpointed already: TERM the main's processes, wait
#   none     no checkpoint: TERM the main's processes, wait
# "The pod is terminated": a SIGTERM that follows the preStop hook's mark, a SIGUSR1 to PID 1
# (the rendered hook sends it first, until PID 1 shows it taken: USR1 then ignored). The kubelet runs a container's preStop hook before its
# TERM for every termination it starts (kuberuntime_container.go, killContainer: the hook
# runs whenever one is set and the grace period is not 0, whatever the reason), so a TERM
# without the mark came from inside the container (`trap 'kill 0' EXIT` in a launcher,
# os.killpg(0, SIGTERM)): it is not a termination, the main's status stays the outcome (43
# if the main dies of it). The mark cannot tell a preemption from a liveness-probe kill (the
# kubelet runs the hook for both): the rendered podFailurePolicy ignores 143 alone only where
# the container has no liveness or startup probe; a real preemption is known there by the
# DisruptionTarget condition. Not as PID 1 (a pod with shareProcessNamespace: the hook's
# signal reaches the pause process) every TERM counts as the termination.
# "The main's processes": as PID 1, the processes of this shell's process group and of the
# main's own (when the main made one: setsid), but this shell and its helpers. A process whose
# parent handles TERM itself is its parent's business (a launcher that forwards: DeepSpeed's,
# torchrun), so every handler runs once; one whose parent cannot forward (a shell's foreground
# child, an orphan) gets the TERM directly. A process in a session or group of its own
# (torchrun's workers) is its parent's business too; once the main has exited, such a
# process, and one that ignores TERM, is not waited for. What the checkpoint command left
# running (an upload it put in the background) is part of the checkpoint: it gets no TERM and
# is waited for until the deadline. Not as PID 1, the main alone.
# DEADLINE, in seconds after SIGTERM: whatever still runs then (main, what it started in any
# process group, the checkpoint) is SIGKILLed. pmanifest render passes gracePeriodSeconds -
# marginSeconds, and marginSeconds for prestop (the hook, bounded to the rest, has used its
# share of the grace period), so this shell has exited when the kubelet's SIGKILL comes.
# Once the termination has begun (the mark), the outcome is 143 whatever the main does: a
# main that exits while the hook still checkpoints (its peers vanished) leaves this shell
# waiting for the kubelet's TERM, which follows the hook, so the hook is never cut short.
# Traps never block: the TERM trap starts the work (a driver in the background: the
# checkpoint, then the TERM) and the body waits, again after each trap that interrupts it.
# The main and the checkpoint start with SIGTERM at its default action and SIGINT, SIGQUIT
# ignored (POSIX for background commands; dash and busybox do not let a script undo it).
# Exit status:
#   143   the pod is being terminated (preStop mark, then SIGTERM)
#   43    the main exited 143 (killed by a SIGTERM) although the pod was not being
#         terminated: a real failure, counted against backoffLimit
#   2     bad arguments (a hand-edited manifest)
#   else  the main's own status, when it exits before the termination begins
# shellcheck disable=SC2329 # the functions run from the traps
trap 'exit 143' TERM  # first statement: a TERM before the main has started ends here
pm_begun='' pm_trapped=''
# the preStop hook's mark: the kubelet terminates the pod. Then USR1 is ignored, which the hook
# reads in /proc/1/status: it sends the mark again until it sees it taken
trap 'pm_begun=1 pm_trapped=1; trap "" USR1' USR1
pm_mode=$1 pm_deadline=$2 pm_n=$3
case $pm_mode in signal | command | prestop | none) ;; *) pm_mode= ;; esac
case $pm_deadline in '' | *[!0-9]*) pm_mode= ;; esac
case $pm_n in '' | *[!0-9]*) pm_mode= ;; esac
if [ -z "$pm_mode" ] || [ "$#" -le $((pm_n + 3)) ]; then
  echo "pmanifest-supervisor: usage: MODE DEADLINE N CHECKPOINT_ARGV... MAIN_ARGV..." >&2
  exit 2
fi
shift 3
pm_child='' pm_driver='' pm_watchdog='' pm_me='' pm_keep='' pm_line='' pm_term=''
pm_fields() {  # $1: a /proc/PID/stat line; sets pm_pid, pm_state, pm_ppid, pm_pgrp
  pm_pid=${1%% *}
  # shellcheck disable=SC2086 # split "STATE PPID PGRP ...", the fields after "PID (COMM) "
  set -- ${1##*) }
  pm_state=$1 pm_ppid=$2 pm_pgrp=$3
}
pm_term_bit() {  # $1: a PID, $2: SigCgt or SigIgn; is SIGTERM in that mask?
  pm_mask=''
  while read -r pm_key pm_value; do
    [ "$pm_key" != "$2:" ] || { pm_mask=$pm_value; break; }
  done 2>/dev/null <"/proc/$1/status"
  [ -n "$pm_mask" ] || return 1
  pm_mask=${pm_mask#"${pm_mask%????}"}  # the last 16 signals; TERM (15) is 0x4000
  [ $((0x$pm_mask & 16384)) != 0 ]
}
# this shell's PID and process group, read from /proc: a kubelet turns a double dollar in
# command/args into one. (Inside a PID namespace whose PID 1 is in a process group led from
# outside, the group reads as 0; it is the same 0 for every process that inherited it.)
{ read -r pm_line </proc/self/stat; } 2>/dev/null
pm_fields "${pm_line:-0 (?) ? 0 0}"
pm_self=$pm_pid pm_group=$pm_pgrp
pm_signal() {  # $1: TERM or KILL; to the main's processes (see above), never to this shell
  if [ "$pm_self" != 1 ]; then
    kill -"$1" "$pm_child" ${pm_driver:+"$pm_driver"} 2>/dev/null
  elif [ "$1" = KILL ]; then
    kill -KILL -1 2>/dev/null  # every process but PID 1 (and the caller): we are exiting
  else
    pm_skip=" $pm_keep "
    for pm_stat in /proc/[0-9]*/stat; do
      read -r pm_line 2>/dev/null <"$pm_stat" || continue
      pm_fields "$pm_line"
      case $pm_pid in 1 | "$pm_me" | "$pm_watchdog") continue ;; esac
      case $pm_pgrp in "$pm_group" | "$pm_child") ;; *) continue ;; esac
      case $pm_skip in *" $pm_pid "*) continue ;; *" $pm_ppid "*)
        pm_skip="$pm_skip$pm_pid " && continue ;; esac  # (the checkpoint's, and their children)
      [ "$pm_ppid" = 1 ] || ! pm_term_bit "$pm_ppid" SigCgt || continue  # it forwards
      kill -TERM "$pm_pid" 2>/dev/null
    done
  fi
}
pm_orphans() {  # PID 1's children in its process group but the main and the driver: pm_list
  pm_list=' '
  for pm_stat in /proc/[0-9]*/stat; do
    read -r pm_line 2>/dev/null <"$pm_stat" || continue
    pm_fields "$pm_line"
    [ "$pm_ppid" = 1 ] && [ "$pm_pgrp" = "$pm_group" ] || continue
    case $pm_pid in "$pm_child" | "$pm_me") ;; *) pm_list="$pm_list$pm_pid " ;; esac
  done
}
pm_busy() {  # as PID 1: is a process of the main's groups still running that TERM can end?
  for pm_stat in /proc/[0-9]*/stat; do
    case $pm_stat in /proc/1/stat | "/proc/$pm_watchdog/stat") continue ;; esac
    read -r pm_line 2>/dev/null <"$pm_stat" || continue
    pm_fields "$pm_line"
    [ "$pm_state" != Z ] && [ "$pm_ppid" != "$pm_watchdog" ] || continue
    case $pm_pgrp in "$pm_group" | "$pm_child") ;; *) continue ;; esac
    pm_term_bit "$pm_pid" SigIgn || return 0
  done
  return 1
}
pm_tock() {  # sleeps a tick: whole seconds where fractions are refused (status 1, not a
  # signal's: a tick killed at the deadline keeps its length)
  sleep "$pm_tick" 2>/dev/null
  [ "$?" != 1 ] || pm_tick=1
}
pm_alive() {  # $1: a PID; does it run (neither gone nor a zombie)?
  { read -r pm_line <"/proc/$1/stat"; } 2>/dev/null || return 1
  pm_fields "$pm_line"
  [ "$pm_state" != Z ]
}
pm_drive() {  # in the background once the pod is terminated: the checkpoint, then the TERM
  { read -r pm_line </proc/self/stat; } 2>/dev/null
  pm_me=${pm_line%% *}
  if [ "$pm_mode" = command ] && kill -0 "$pm_child" 2>/dev/null; then
    pm_orphans
    pm_before=$pm_list
    (  # the checkpoint: keep the first $pm_n parameters and run them
      trap '' INT QUIT
      trap - TERM USR1
      pm_i=0 pm_total=$#
      while [ "$pm_i" -lt "$pm_total" ]; do
        [ "$pm_i" -ge "$pm_n" ] || set -- "$@" "$1"
        shift
        pm_i=$((pm_i + 1))
      done
      exec "$@"
    ) || echo "pmanifest-supervisor: checkpoint command failed with status $?" >&2
    pm_orphans  # what it left running (an upload in the background) is the checkpoint's
    for pm_pid in $pm_list; do
      case $pm_before in *" $pm_pid "*) ;; *) pm_keep="$pm_keep $pm_pid" ;; esac
    done
  fi
  pm_signal TERM
}
pm_on_term() {  # the TERM trap ("$@": the script's parameters); never blocks
  pm_trapped=1
  { read -r pm_line </proc/self/stat; } 2>/dev/null
  [ "${pm_line%% *}" = "$pm_self" ] || exit 143  # the main's shell, before it reset the trap
  if [ "$pm_self" = 1 ] && [ -z "$pm_begun" ]; then
    echo "pmanifest-supervisor: SIGTERM without the preStop hook's mark, so from inside" \
      "the container (kill 0, killpg): not a termination; the main's status decides" >&2
    return 0
  fi
  trap '' TERM  # further TERMs are ignored (the checkpoint runs once), also by the helpers
  pm_term=1
  pm_child=${pm_child:-$!}
  [ -n "$pm_child" ] || exit 143  # the main has not started: nothing to stop
  echo "pmanifest-supervisor: SIGTERM received; mode $pm_mode, deadline ${pm_deadline}s" >&2
  pm_drive "$@" &
  pm_driver=$!
  (sleep "$pm_deadline"; echo "pmanifest-supervisor: deadline reached; SIGKILL" >&2
    pm_signal KILL) &
  pm_watchdog=$!
}
trap 'pm_on_term "$@"' TERM  # from here on a TERM is acted on in the trap, wherever it comes
(trap - TERM USR1; trap '' INT QUIT; shift "$pm_n"; exec "$@") &  # the main
pm_child=${pm_child:-$!}  # (a TERM right after the fork has set it, and started others)
# Wait for the main, again after each trap that interrupts the wait (a status above 128 once
# a trap ran). Here at the top level, where a trap's "$@" is the script's parameters (in a
# function it is the function's). A wait for a main reaped meanwhile can come back with no
# status (127, an unknown PID; bash: -1): then the main ended as the trap's signal came, most
# likely of that signal, and the interrupted wait's status (128 + it) stands.
pm_status=''
while :; do
  pm_trapped=''
  wait "$pm_child"
  pm_line=$?
  if [ -n "$pm_status" ]; then
    case $pm_line in 127 | 255 | -1) pm_line=$pm_status ;; esac
  fi
  pm_status=$pm_line
  [ "$pm_status" -gt 128 ] && [ -n "$pm_trapped" ] && [ -z "$pm_term" ] || break
done  # (once the pod is terminated, the main is waited for below, without `wait`)
if [ -z "$pm_term" ] && [ -n "$pm_begun" ]; then
  echo "pmanifest-supervisor: the main exited ($pm_status) after the preStop hook started;" \
    "waiting for the kubelet's SIGTERM" >&2
  pm_tick=0.2
  while [ -z "$pm_term" ]; do
    sleep "$pm_tick" 2>/dev/null  # (here, not in pm_tock: a TERM trap needs the script's "$@")
    [ "$?" != 1 ] || pm_tick=1
  done
fi
if [ -n "$pm_term" ]; then  # the pod is being terminated: the outcome is 143
  # the main and the driver (the checkpoint, then the TERM), and as PID 1 what the main left
  # running (a launcher's trainer), until the deadline. Polled, not waited for: bash's `wait`
  # for a child reaped while a trap ran can block until every other child has ended.
  pm_tick=0.2
  while pm_alive "$pm_watchdog" && { pm_alive "$pm_child" ||
    pm_alive "$pm_driver" || { [ "$pm_self" = 1 ] && pm_busy; }; }; do
    pm_tock  # (a tick)
  done
  pm_child=$pm_watchdog
  pm_signal KILL  # the watchdog, and as PID 1 whatever is left
  exit 143
fi
trap '' TERM USR1  # the main exited by itself: its status is the outcome
[ "$pm_self" != 1 ] || kill -KILL -1 2>/dev/null  # what it left running ends with it
if [ "$pm_status" = 143 ]; then
  echo "pmanifest-supervisor: the main process exited 143 (SIGTERM) without a" \
    "termination; exiting 43 so that the failure counts" >&2
  exit 43
fi
exit "$pm_status"
