#!/usr/bin/env bash
# The test Neo4j 5, in the background, for make and CI:
#   neo4j.sh build                 build target/neo4j-launcher.jar (Maven, Java 17)
#   neo4j.sh start PORT DATA_DIR   start it (building first if needed), wait until it answers,
#                                  print its bolt URI; log and pid file go into DATA_DIR
#   neo4j.sh stop DATA_DIR         SIGTERM, wait for the clean shutdown (SIGKILL after 30 s)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
jar="$here/target/neo4j-launcher.jar"

# Maven writes to stderr so that `start` prints nothing but the URI on stdout.
build() { mvn -q -B -Dstyle.color=never -f "$here/pom.xml" package 1>&2; }

case "${1:-}" in
  build)
    build
    ;;
  start)
    port="${2:?port}"; data="${3:?data directory}"
    mkdir -p "$data"
    [ -f "$jar" ] || build
    java "-Xmx${NEO4J_HEAP_MB:-1024}m" -jar "$jar" --port "$port" --data "$data" >"$data/launcher.log" 2>&1 &
    pid=$!
    echo "$pid" >"$data/launcher.pid"
    for _ in $(seq 1 240); do
      if grep -q '^NEO4J READY' "$data/launcher.log"; then
        echo "bolt://127.0.0.1:$port"
        exit 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -KILL "$pid" 2>/dev/null || true
    cat "$data/launcher.log" >&2
    echo "neo4j.sh: Neo4j did not start on port $port" >&2
    exit 1
    ;;
  stop)
    pidfile="${2:?data directory}/launcher.pid"
    [ -f "$pidfile" ] || exit 0
    pid="$(cat "$pidfile")"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -KILL "$pid" 2>/dev/null || true
    rm -f "$pidfile"
    ;;
  *)
    echo "usage: $0 build | start PORT DATA_DIR | stop DATA_DIR" >&2
    exit 2
    ;;
esac
