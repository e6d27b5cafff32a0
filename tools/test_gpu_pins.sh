#!/usr/bin/env bash
# The GPU image's versions on this CPU: torch 2.11.0 and transformers 5.17.0 (the lent GPU machine's pins) run
# `benchmarks/gpu_rehearsal.py --quick` on Phi-2 (the phases that run the model) and the device-strict notebook
# (nbs/13b_device_strict.ipynb); ends with "N passed, N failed" like tools/test.sh, exit 1 on a failure. Run after
# tools/install.sh (the project's .venv).
#
# The environment ($GPU_PINS_VENV, default ~/.cache/etc_nb/venv-gpu-pins: outside the clone, so a fresh-clone CI builds
# it once) holds only the two pinned packages and what they pull in; everything else (etc_nb's other dependencies,
# nbdev) is read from the project's .venv behind them (a .pth line, added after the install so that pip never touches
# .venv). Python: this machine's 3.11 (the image has 3.12; the OS has no 3.12 package). torch: PyPI's 2.11.0 wheel is
# the CUDA build (its CPU-only build is on download.pytorch.org, not reachable from CI), so its CUDA libraries come
# along (~3 GB once, from PyPI); with no GPU it runs on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH=2.11.0 TRANSFORMERS=5.17.0
MAIN=$(cd "${VENV:-.venv}" && pwd)
PINS=${GPU_PINS_VENV:-${ETC_NB_CACHE:-$HOME/.cache/etc_nb}/venv-gpu-pins}
PY="$PINS/bin/python"
want="torch==$TORCH transformers==$TRANSFORMERS"
if [ "$(cat "$PINS/.pins" 2>/dev/null)" != "$want" ]; then
  echo "== building $PINS ($want)"
  rm -rf "$PINS"; python3 -m venv "$PINS"
  # pip's exit status, not grep's: a failed install stops here, before .pins is written (grep -v alone exits 1 on no output)
  rc=0; "$PY" -m pip --disable-pip-version-check -q install "torch==$TORCH" "transformers==$TRANSFORMERS" > "$PINS/pip.log" 2>&1 || rc=$?
  grep -v "is ignored" "$PINS/pip.log" || true
  if [ "$rc" != 0 ]; then echo "== GPU pins: pip install of $want failed (exit $rc); $PINS/.pins not written" >&2; exit 1; fi
  echo "$want" > "$PINS/.pins"
fi
# behind the pinned packages, this clone's .venv: written on every run, since the environment outlives the clone that
# built it (a .pth naming a deleted clone's .venv would leave etc_nb's other dependencies unimportable)
site=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
"$MAIN/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])" > "$site/zz_project_venv.pth"
export PATH="$PINS/bin:$PATH" PYTHONPATH="$PWD" HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false \
       PYTHONWARNINGS=ignore OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} MKL_NUM_THREADS=${MKL_NUM_THREADS:-1}
"$PY" -c "import torch, transformers as t; assert (torch.__version__.split('+')[0], t.__version__) == ('$TORCH', '$TRANSFORMERS'), (torch.__version__, t.__version__); print('== torch', torch.__version__, '| transformers', t.__version__)"

passed=0 failed=0
check() { # name, command...: one more passed or failed
  local name=$1; shift; local t0=$SECONDS log; log=$(mktemp)
  if "$@" > "$log" 2>&1; then passed=$((passed + 1)); echo "$name (GPU pins): ok in $((SECONDS - t0))s"
  else failed=$((failed + 1)); tail -30 "$log"; echo "$name (GPU pins): FAILED after $((SECONDS - t0))s"; fi
  rm -f "$log"
}
# (the project's nbdev_test script, run by this environment's Python: the notebook's kernel is this process)
check "nbs/13b_device_strict.ipynb" timeout 900 "$PY" "$MAIN/bin/nbdev_test" --path nbs/13b_device_strict.ipynb --do_print
# one model (Phi-2: the other architecture; the whole four-model run is tools/test.sh's), the phases that run the model
# under these versions: the seven methods through the CLI and the reference loop (HF generate), the SIGKILLed and resumed
# run, no SlotPool alive, batch parity, the other seven methods. Not here, run once by tools/test.sh's `--quick` under the
# project's versions: lucene and ray_worker (the GPU image has neither Java nor Ray: they skip there) and corpus (an open
# corpus's BM25 index, no torch), each the plain CLI's ETC on the model otherwise
PHASES=cli,kill_resume,pool_check,parity,other_methods
check "benchmarks/gpu_rehearsal.py --quick --models phi-2 --phases $PHASES" timeout "${BENCH_TIMEOUT:-900}" "$PY" benchmarks/gpu_rehearsal.py --quick --models phi-2 --phases "$PHASES"
echo "== GPU pins: $passed ok, $failed failed"
[ "$failed" = 0 ]
