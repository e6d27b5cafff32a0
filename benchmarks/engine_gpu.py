#!/usr/bin/env python
"""GPU check of `etc_nb.engine` on a randomly initialised SmolLM2-135M architecture (needs no model files).

    python benchmarks/engine_gpu.py          # on a CUDA machine
    python benchmarks/engine_gpu.py --quick  # seconds on the CPU: the same checks on a 2-layer model of the same family (CI)

Runs the engine on CUDA in fp32 and bf16: greedy parity with `model.generate` (with and without prefix reuse),
attention rows against eager `output_attentions`, rollback + context continuation against `generate` from scratch,
prefix-reuse logits, and per-token timings (engine with signals / bare loop / stock DynamicCache loop). Random weights
(scaled x4 so that greedy choices are not near-ties) and a byte-level BPE trained on the prompts stand in for the
real checkpoint, which does not travel to a GPU machine without a model hub; timings do not depend on weight values.
Writes `$OUT/gpu.json` (or ./gpu.json) and prints it as the last line. Needs torch, transformers, tokenizers and
fastcore (pure Python; carry it as a wheel where it is missing). `--quick` runs every check and timing on the CPU with a
tiny random Llama (2 layers, width 64), 2 questions and short generations, writes no file, and measures nothing: it
only shows that the code still runs.
"""
import argparse, os, sys, time, json, copy, statistics
here = os.path.dirname(os.path.abspath(__file__)); sys.path[:0] = [here, os.path.dirname(here)]   # benchmarks/, repo root
import torch, transformers
from transformers import LlamaConfig, LlamaForCausalLM
from etc_nb.engine import Engine, eager_attentions
from engine_prompts import DEMOS, case, context_block
from engine import bare_loop, engine_run        # benchmarks/engine.py
ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
ap.add_argument('--quick', action='store_true', help='seconds on the CPU with a tiny model of the same family (CI); measures nothing')
QUICK = ap.parse_args().quick
DEV = 'cuda' if torch.cuda.is_available() and not QUICK else 'cpu'
res = dict(torch=torch.__version__, transformers=transformers.__version__, gpu=torch.cuda.get_device_name() if DEV == 'cuda' else 'cpu')
QS = ["When did Lothair II's mother die?", "Who is the father of the director of film Titanic?",
      "Which film came out first, Jaws or Star Wars?", "Where was the composer of film Psycho born?",
      "Are North Korea and South Korea in the same continent?"]
def make_tok(): # SmolLM2's tokenizer.json is too big to travel: a byte-level BPE trained here on the prompts
    from tokenizers import Tokenizer, models, trainers, pre_tokenizers, decoders
    from transformers import PreTrainedTokenizerFast
    t = Tokenizer(models.BPE()); t.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False); t.decoder = decoders.ByteLevel()
    t.train_from_iterator([DEMOS]*3 + QS, trainers.BpeTrainer(vocab_size=4096, special_tokens=['<|endoftext|>', '<|im_start|>', '<|im_end|>'],
                                                              initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return PreTrainedTokenizerFast(tokenizer_object=t, eos_token='<|im_end|>', pad_token='<|im_end|>')
tok = make_tok(); res['vocab'] = len(tok)
shape = (dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16)
         if QUICK else dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3,
                            head_dim=64))                                                    # SmolLM2-135M (quick: a tiny one)
cfg = LlamaConfig(**shape, max_position_embeddings=8192, rms_norm_eps=1e-5, rope_theta=100000.0, tie_word_embeddings=True,
                  vocab_size=len(tok), bos_token_id=None, eos_token_id=None, pad_token_id=tok.pad_token_id)
res['model'] = 'tiny random llama (quick)' if QUICK else 'random SmolLM2-135M-shaped llama'
torch.manual_seed(0)
base = LlamaForCausalLM(cfg).eval(); base.generation_config.eos_token_id = None
def sync():
    if DEV == 'cuda': torch.cuda.synchronize()
with torch.no_grad():                      # sharper than the init so that greedy choices are not near-ties
    for n, p in base.named_parameters():
        if n.endswith('weight') and p.dim() == 2: p.mul_(4)
def hf(model, ids, n):
    with torch.inference_mode():
        return model.generate(torch.tensor([ids], device=DEV), do_sample=False, max_new_tokens=n,
                              pad_token_id=tok.pad_token_id)[0, len(ids):].tolist()

def parity(model, tag, rows_tol):
    e = Engine(model, tok, attention='heads'); e.eos = set()
    pre = e.prefix(DEMOS); out = {}
    same = []
    for q in QS:
        s = e.session(pre, case=case(q)); ids = [st.id for st in s.generate(16)]
        same.append(ids == hf(model, s.ids[:len(s.ids)-16], 16))
    out['greedy_same'] = same
    same_np, e0 = [], Engine(model, tok, attention=True); e0.eos = set()      # same chunking as generate: no prefix
    for q in QS:
        s = e0.session(e0.prefix(''), case=DEMOS + case(q)); ids = [st.id for st in s.generate(16)]
        same_np.append(ids == hf(model, s.ids[:len(s.ids)-16], 16))
    out['greedy_same_without_prefix'] = same_np
    s = e.session(pre, case=case(QS[0])); steps = list(s.generate(24))
    ref = eager_attentions(model, s.ids[:s.n_cached])
    P = len(pre)
    out['row_err'] = max((s.row(q, heads=True).float() - ref[:, q, :q+1]).abs().max().item() for q in range(P, s.n_cached))
    s.rollback(10); s.update(case=case(QS[0]), context=context_block(["Lothair II was a king.", "Ermengarde died in 851."]), text=s.text_ids)
    cont = [st.id for st in s.generate(12)]
    out['rollback_same'] = cont == hf(model, s.ids[:len(s.ids)-12], 12)
    s1 = e.session(pre, case=case(QS[1])); next(s1.generate(1))
    with torch.inference_mode(): full = model(torch.tensor([s1.ids[:-1]], device=DEV)).logits[0, -1]
    out['prefix_logit_err'] = (s1.logits.float() - full.float()).abs().max().item()
    out['devices'] = sorted({str(s.received().device), str(s.logits.device), str(s.row(P).device)})
    res[tag] = out; print(tag, out, flush=True)

def timing(model, tag, n=64):
    n = 6 if QUICK else n
    e = Engine(model, tok, attention=True); e.eos = set(); pre = e.prefix(DEMOS)
    rows = []
    for r in range(1 if QUICK else 2):
        for i, q in enumerate(QS[:2] if QUICK else QS):
            c = case(q); cids = e.encode(c)
            t = dict(engine=engine_run(e, pre, c, n, etc=False)[1], bare=bare_loop(model, pre, cids, n)[1],
                     stock=bare_loop(model, pre, cids, n, stock_cache=True)[1])
            rows.append(t)
    med = lambda k: statistics.median(r[k] for r in rows)
    wb = sum({p.data_ptr(): p.numel()*p.element_size() for p in model.parameters()}.values())
    x = torch.empty(2**24 if QUICK else 2**28, dtype=torch.float32, device=DEV); y = torch.empty_like(x); y.copy_(x); sync()
    t = time.perf_counter(); [y.copy_(x) for _ in range(10)]; sync(); bw = 2*x.numel()*4*10/(time.perf_counter()-t)
    out = dict(ms_engine=1e3*med('engine'), ms_bare=1e3*med('bare'), ms_hf_dynamic=1e3*med('stock'),
               signal_overhead=statistics.median(r['engine']/r['bare'] for r in rows),
               tokens_per_s=1/med('engine'), copy_bw_gb_s=bw/1e9, weight_mb=wb/1e6,
               bandwidth_fraction=wb/med('engine')/bw)
    res[tag] = out; print(tag, out, flush=True)

m32 = base.to(DEV); m32.set_attn_implementation('sdpa')
parity(m32, 'fp32_parity', 1e-5)
timing(m32, 'fp32_timing')
m16 = copy.deepcopy(m32).to(torch.bfloat16)
parity(m16, 'bf16_parity', 2e-2)
timing(m16, 'bf16_timing')
if DEV == 'cuda' and not QUICK:   # a Llama-2-7B-shaped model (random bf16 weights): the per-token cost of the papers' models
    del m32, m16; torch.cuda.empty_cache()
    cfg7 = LlamaConfig(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
                       max_position_embeddings=4096, rms_norm_eps=1e-5, vocab_size=len(tok), bos_token_id=None, eos_token_id=None,
                       pad_token_id=tok.pad_token_id)
    torch.set_default_dtype(torch.bfloat16)
    with torch.device(DEV): m7 = LlamaForCausalLM(cfg7).eval()
    torch.set_default_dtype(torch.float32); m7.generation_config.eos_token_id = None; m7.set_attn_implementation('sdpa')
    parity(m7, 'bf16_7b_parity', 2e-2)
    timing(m7, 'bf16_7b_timing')
if not QUICK: json.dump(res, open(os.path.join(os.environ.get('OUT', '.'), 'gpu.json'), 'w'), indent=1)
print(json.dumps(res))
