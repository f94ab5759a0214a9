#!/usr/bin/env bash
# Local Cosmos DB emulator (@vercel/cosmosdb-server) on loopback, plain HTTP.
#
#   scripts/emulator.sh install         install into .emulator/ (git-ignored)
#   scripts/emulator.sh start           start, wait until it answers, create db + containers
#   scripts/emulator.sh stop            stop the one this script started (by PID)
#   scripts/emulator.sh env             print COSMOS_ENDPOINT/COSMOS_KEY exports
#
# Settings: COSMOS_EMULATOR_PORT (8081), EMULATOR_DIR (<repo>/.emulator),
# COSMOS_DATABASE (shop), COSMOS_CONTAINER (orders), IDEMPOTENCY_CONTAINER (idempotency-keys).
# The emulator keeps data in memory only: a restart starts empty.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${EMULATOR_DIR:-$repo/.emulator}
port=${COSMOS_EMULATOR_PORT:-8081}
version=1.0.1
# The emulators' well-known public key; the vercel emulator accepts any key.
key='C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=='
endpoint="http://127.0.0.1:${port}/"
pidfile="$dir/emulator-$port.pid"
logfile="$dir/emulator-$port.log"
bin="$dir/node_modules/.bin/cosmosdb-server"

say() { printf 'emulator: %s\n' "$*" >&2; }

install() {
  if [ -x "$bin" ] && grep -q "\"version\": \"$version\"" "$dir/node_modules/@vercel/cosmosdb-server/package.json" 2>/dev/null; then
    return
  fi
  command -v npm >/dev/null || { say "npm is required (apt-get install nodejs npm)"; exit 1; }
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || printf '{"name":"local-cosmos-emulator","private":true}\n' > "$dir/package.json"
  say "installing @vercel/cosmosdb-server@$version into $dir"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "@vercel/cosmosdb-server@$version" >&2
}

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

answers() { curl -s -o /dev/null --max-time 1 "$endpoint"; }

start() {
  install
  if running; then
    say "already running on $endpoint (pid $(cat "$pidfile"))"
  else
    if answers; then
      say "something else answers on $endpoint; set COSMOS_EMULATOR_PORT"; exit 1
    fi
    # setsid: the emulator outlives the shell that started it, in its own group.
    setsid nohup "$bin" --host 127.0.0.1 -p "$port" --no-ssl >"$logfile" 2>&1 < /dev/null &
    echo $! > "$pidfile"
    for _ in $(seq 1 150); do
      answers && break
      running || { say "exited at start; see $logfile"; cat "$logfile" >&2; exit 1; }
      sleep 0.2
    done
    answers || { say "no answer on $endpoint after 30 s; see $logfile"; exit 1; }
    say "running on $endpoint (pid $(cat "$pidfile"))"
  fi
  (cd "$repo" && COSMOS_ENDPOINT="$endpoint" COSMOS_KEY="$key" go run ./cmd/cosmos-setup >&2)
}

stop() {
  if running; then
    pid=$(cat "$pidfile")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    say "stopped (pid $pid)"
  fi
  rm -f "$pidfile"
}

case "${1:-}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  env) printf 'export COSMOS_ENDPOINT=%q\nexport COSMOS_KEY=%q\n' "$endpoint" "$key" ;;
  *) echo "usage: $0 install|start|stop|env" >&2; exit 2 ;;
esac
