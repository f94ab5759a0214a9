# Sourced by chaos.sh and run-local.sh: a failing run keeps its logs in a
# folder of its own, which is not deleted, and says where; a passing run's
# folder is removed, unless RUN_KEEP_LOGS=1 (make soak keeps a passing run's
# logs when its figures stand out).
#
#   runlogs_start NAME   the folder: $RUN_LOG_DIR, else .local/logs/NAME-<UTC time>-<pid>;
#                        from here on this script's stderr (the host emulator's lines) is
#                        copied to host.log in it
#   runlogs_end RC       stderr back; the folder removed when RC is 0 (and RUN_KEEP_LOGS
#                        is not 1), else named

runlogs_start() {
  RUNLOGS=${RUN_LOG_DIR:-.local/logs/$1-$(date -u +%Y%m%dT%H%M%SZ)-$$}
  mkdir -p "$RUNLOGS"
  exec {runlogs_stderr}>&2
  exec 2> >(tee -a "$RUNLOGS/host.log" >&"$runlogs_stderr")
  runlogs_tee=$!
}

runlogs_end() {
  # Closing the copy's input ends tee; waiting for it keeps the file whole.
  exec 2>&"$runlogs_stderr" {runlogs_stderr}>&-
  wait "$runlogs_tee" 2>/dev/null || true
  if [ "$1" -eq 0 ] && [ "${RUN_KEEP_LOGS:-}" != 1 ]; then
    rm -rf "$RUNLOGS"
  else
    echo "logs kept in $RUNLOGS: $(cd "$RUNLOGS" && ls | tr '\n' ' ')" >&2
  fi
}
