# pmanifest SIGTERM wrapper (POSIX sh). Invoked as
#   /bin/sh -c WRAPPER pmanifest-sigterm N CHECKPOINT_ARGV... MAIN_ARGV...
# The argv arrives as positional parameters and is never evaluated by this script.
# On TERM: checkpoint exactly once, stop the main process, exit 143 (never 0, so a Job
# does not count a preemption as success). The main process runs as a background child
# that the shell waits on, so the trap runs as soon as the signal arrives.
n=$1
shift
pmanifest_checkpoint() (
  # keep the first $n parameters (the checkpoint argv) and run them
  total=$#
  i=0
  while [ "$i" -lt "$total" ]; do
    if [ "$i" -lt "$n" ]; then
      set -- "$@" "$1"
    fi
    shift
    i=$((i + 1))
  done
  command "$@"  # "command": a checkpoint argv never calls a function of this script
)
pmanifest_on_term() {
  trap '' TERM
  echo "pmanifest: SIGTERM received, checkpointing" >&2
  pmanifest_checkpoint "$@" || echo "pmanifest: checkpoint command failed with status $?" >&2
  if [ -n "$child" ]; then
    kill -TERM "$child" 2>/dev/null
    wait "$child"
  fi
  exit 143
}
child=
trap 'pmanifest_on_term "$@"' TERM
(
  shift "$n"
  exec "$@"
) &
child=$!
# the main process's status is the script's status (the last command's)
wait "$child"
