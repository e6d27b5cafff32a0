#!/usr/bin/env bash
# Fresh-clone CI under load (issue 50's acceptance): clone this repository's HEAD into ../ci-check-N, run `.ci/run` there
# with a CPU busy loop beside it the whole time, then append one line (commit, rc, seconds, result line) to ../ci_runs.txt.
# Usage: bash tools/ci_busy.sh N     (log: ../ci-check-N.log; ../shared must sit beside the clone, as in CI)
set -uo pipefail
[[ "${1:-}" =~ ^[0-9]+$ ]] || { echo "usage: bash tools/ci_busy.sh N  (N: the run's number)" >&2; exit 2; }
N=$1; cd "$(dirname "$0")/.."; top=$(cd .. && pwd)
rm -rf "$top/ci-check-$N" && git clone -q . "$top/ci-check-$N" && cd "$top/ci-check-$N" || exit 1
( while :; do :; done ) & busy=$!
trap 'kill $busy 2>/dev/null' EXIT
start=$(date +%s); bash .ci/run > "$top/ci-check-$N.log" 2>&1; rc=$?
result=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$top/ci-check-$N.log" | tail -1)
echo "ci-check-$N $(git rev-parse --short HEAD) rc=$rc $(( $(date +%s) - start )) s: $result" >> "$top/ci_runs.txt"
exit $rc
