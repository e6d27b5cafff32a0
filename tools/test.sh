#!/usr/bin/env bash
# The test command: install, check that notebooks are clean and exported, run nbdev_test, end with "N passed, N failed".
# FLAGS="slow" forces flagged cells (tst_flags in settings.ini); NBS limits the run to some notebooks (a path or glob).
# Beside it, every benchmark runs in its quick mode (`--quick`: seconds, tiny sizes; any exception fails it), then the
# GPU image's pins; each counts as one more passed or failed; BENCH=0 (or NBS) skips them. A check that needs a benchmark
# file that is not here is a counted skip ("K skipped (no benchmark data: ...)"); SAVE_TIMES=1 keeps the notebooks' times.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install.sh --browser   # with headless Chromium for nbs/90_interface.ipynb
. "${VENV:-.venv}/bin/activate"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONWARNINGS=ignore
# a process killed by a fatal signal (segfault, abort) prints every thread's Python stack: the test workers, the scripts
# the notebooks start, the benchmarks (faulthandler, on from interpreter start: before any JVM, which passes it on)
export PYTHONFAULTHANDLER=1
# nbdev_test runs two notebooks at a time on the two cores: one math thread each avoids oversubscription (measured 6x)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
# Ray starts its workers at nice 15: beside the other notebooks' normal-priority work, 16_scale's two actors then wait for
# idle cycles (1,005 s of a 1,686 s run); at nice 0 they get their share like every other test process
export RAY_worker_niceness=${RAY_worker_niceness:-0}

echo "== nbdev_clean must be a no-op (notebooks committed clean)"
nbdev_clean
if [ -n "$(git status --porcelain -- nbs)" ]; then git status --short -- nbs; echo "notebooks not clean: run nbdev_clean"; echo "0 passed, 1 failed"; exit 1; fi
echo "== nbdev_export must be a no-op (library in sync with notebooks)"
nbdev_export
if [ -n "$(git status --porcelain -- etc_nb)" ]; then git status --short -- etc_nb; git diff -- etc_nb | head -50; echo "library out of sync: run nbdev_export"; echo "0 passed, 1 failed"; exit 1; fi

log=$(mktemp)
# the quick modes and the pins, one after another, beside nbdev_test's two workers: single-threaded, they fill the cycles
# the workers leave (a notebook waiting on a subprocess, a cluster or a file) instead of running alone on one of two cores
# after nbdev_test; their output and verdicts are written to $tail and shown, and counted, after nbdev_test. Each has
# BENCH_TIMEOUT seconds as a hang guard (gpu_rehearsal --quick: 136 s alone, 383-400 s beside nbdev_test on 2 cores;
# running beside nbdev_test, a hung one delays the end of the run by its guard less the notebooks' time)
tail=$(mktemp -d)
tail_check() { # name, command...: "name: ok in Ns" or its last 30 lines and "name: FAILED after Ns" into $tail/verdicts
  local name=$1; shift; local t0=$SECONDS
  # (indented: only the verdict lines are counted) after a pass, a script's own summary lines (the pins' versions,
  # checks and tally); after a failure, its last 30 lines
  if "$@" > "$tail/out" 2>&1; then { echo "$name: ok in $((SECONDS - t0))s"; grep -E '^== |\(GPU pins\): ' "$tail/out" | sed 's/^/  /' || true; }
  else { tail -30 "$tail/out" | sed 's/^/    /'; echo "$name: FAILED after $((SECONDS - t0))s"; }; fi >> "$tail/verdicts"
}
tail_checks() {
  for b in benchmarks/*.py; do
    [ "$b" = benchmarks/engine_prompts.py ] && continue   # a data module, not a benchmark
    tail_check "$b --quick" timeout "${BENCH_TIMEOUT:-1500}" python "$b" --quick
  done
  tail_check tools/check_rehearsal_cleanup.py python tools/check_rehearsal_cleanup.py   # its model folders, stub phases
  # the GPU image's pins (torch 2.11.0, transformers 5.17.0): rehearsal + device-strict
  tail_check tools/test_gpu_pins.sh bash tools/test_gpu_pins.sh
}
if [ "${BENCH:-1}" != 0 ] && [ -z "${NBS:-}" ]; then tail_checks & tail_pid=$!; fi

echo "== nbdev_test"
# a check that needs a benchmark file that is not here is a counted skip: one line each in this tally (needs_benchmark in
# etc_nb.core); with ETC_NB_REQUIRE_DATA=1 (.ci/run, where the data is) the same miss fails its notebook instead
export ETC_NB_SKIPS=$(mktemp)
set +e
# nbdev_test, each notebook under a stack frame named `notebook PATH`: a worker's crash stack names its notebook
timeout "${TEST_TIMEOUT:-4800}" python tools/nbdev_test_named.py --do_print --timing --flags "${FLAGS:-}" ${NBS:+--path "$NBS"} 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
passed=$(grep -c '^- Completed' "$log" || true)
failed=$(sed -n '/Tests Failed On The Following Notebooks/,$p' "$log" | grep -c $'^\t' || true)
passed=$((passed - failed < 0 ? 0 : passed - failed))   # (a failed notebook is "Completed" too; a crashed one is not)
crashed=$(awk '/^Fatal Python error:/ {want=1} want && /File "notebook / {sub(/.*File "notebook /, ""); sub(/".*/, ""); print; want=0}' "$log" | xargs -r -n1 basename | sort -u)
unfinished=$(comm -23 <(sed -n 's/^Starting //p' "$log" | xargs -r -n1 basename | sort -u) <(sed -n 's/^- Completed //p' "$log" | xargs -r -n1 basename | sort -u))
if [ -n "$crashed" ]; then echo "== a test process died of a fatal signal (its Python stacks above) while running: $(echo $crashed)"; failed=$((failed + $(echo "$crashed" | wc -l))); fi
[ -n "$unfinished" ] && echo "== started and never finished: $(echo $unfinished)"
[ "$rc" != 0 ] && [ "$failed" = 0 ] && failed=1   # timeout or crash: never report a clean run
[ "$rc" = 124 ] && echo "nbdev_test timed out after ${TEST_TIMEOUT:-4800}s"

if [ -n "${tail_pid:-}" ]; then
  echo "== benchmarks --quick (the full runs are manual: benchmarks/README.md), then the GPU image's pins"
  wait "$tail_pid" || true
  cat "$tail/verdicts"
  passed=$((passed + $(grep -c '^[^ ].*: ok in [0-9]*s$' "$tail/verdicts" || true)))
  nfailed=$(grep -c '^[^ ].*: FAILED after [0-9]*s$' "$tail/verdicts" || true); failed=$((failed + nfailed))
  if [ "$nfailed" != 0 ] && [ "$rc" = 0 ]; then rc=1; fi
fi
slowest=$(sed -n 's/^\(.*\.ipynb\): \([0-9]*\) secs$/\1 \2s/p' "$log" | head -5 | paste -sd, - | sed 's/,/, /g')
[ -n "$slowest" ] && echo "== five slowest notebooks: $slowest"
if [ "${SAVE_TIMES:-0}" = 1 ] && [ -z "${NBS:-}" ] && [ -n "$slowest" ]; then   # the order the next run starts them in
  sed -n 's/^\(.*\.ipynb\): \([0-9]*\) secs$/\1\t\2/p' "$log" > tools/notebook_seconds.tsv; fi
skipped=$(wc -l < "$ETC_NB_SKIPS")
if [ "$skipped" -gt 0 ]; then
  echo "== counted skips (no benchmark data; data/README.md says where to get each file):"; sed 's/^/   /' "$ETC_NB_SKIPS"
  files=$(sed -E 's/^[^:]+: //; s/ \(.*//; s/;.*//; s/, /\n/g' "$ETC_NB_SKIPS" | sort -u | paste -sd, - | sed 's/,/, /g')
  echo "$passed passed, $failed failed, $skipped skipped (no benchmark data: $files)"
else echo "$passed passed, $failed failed"; fi
exit "$rc"
