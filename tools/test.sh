#!/usr/bin/env bash
# The test command: install, check that notebooks are clean and exported, run nbdev_test, end with "N passed, N failed".
# FLAGS="slow" forces flagged cells (tst_flags in settings.ini); NBS limits the run to some notebooks (a path or glob).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/install.sh
. "${VENV:-.venv}/bin/activate"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONWARNINGS=ignore
# nbdev_test runs two notebooks at a time on the two cores: one math thread each avoids oversubscription (measured 6x)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}

echo "== nbdev_clean must be a no-op (notebooks committed clean)"
nbdev_clean
if [ -n "$(git status --porcelain -- nbs)" ]; then git status --short -- nbs; echo "notebooks not clean: run nbdev_clean"; echo "0 passed, 1 failed"; exit 1; fi
echo "== nbdev_export must be a no-op (library in sync with notebooks)"
nbdev_export
if [ -n "$(git status --porcelain -- etc_nb)" ]; then git status --short -- etc_nb; git diff -- etc_nb | head -50; echo "library out of sync: run nbdev_export"; echo "0 passed, 1 failed"; exit 1; fi

echo "== nbdev_test"
log=$(mktemp)
set +e
timeout "${TEST_TIMEOUT:-4800}" nbdev_test --do_print --timing --flags "${FLAGS:-}" ${NBS:+--path "$NBS"} 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
passed=$(grep -c '^- Completed' "$log" || true)
failed=$(sed -n '/Tests Failed On The Following Notebooks/,$p' "$log" | grep -c $'^\t' || true)
[ "$rc" != 0 ] && [ "$failed" = 0 ] && failed=1   # timeout or crash: never report a clean run
[ "$rc" = 124 ] && echo "nbdev_test timed out after ${TEST_TIMEOUT:-4800}s"
echo "$((passed - failed < 0 ? 0 : passed - failed)) passed, $failed failed"
exit "$rc"
