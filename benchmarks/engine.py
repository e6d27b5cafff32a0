#!/usr/bin/env python
"""Benchmark of `etc_nb.engine` on few-shot CoT prompts of the 2WikiMultihopQA shape (~1.5k-token demos).

    python benchmarks/engine.py [--questions 20] [--max-new 32] [--ref-questions 5] [--threads N] [--budget 420]
    python benchmarks/engine.py --quick      # seconds: 1 question, 2 demos, 1 reference question (CI; measures nothing)

Measured in one run, every comparison interleaved question by question (alternating which side runs first), and
summarised by medians over questions, since the machine is shared:

* `signal_overhead`: decode time per token of the engine with all signals (entropy/prob/logprob, last-layer attention
  row, received-attention aggregate read after every token, a streaming ETC score) / a bare greedy KV-cache loop
  (`model(tok, past_key_values=cache)` + argmax) on the same cache type. Same tokens asserted.
  `vs_hf_dynamic_cache`: the same engine / the bare loop on transformers' stock `DynamicCache` (what `generate` uses).
* `reference_speedup`: a reference-style loop (`04b_released_code`) per question = `model.generate` on the
  full prompt (demos + question), an extra full forward with `output_attentions=True` (eager in every layer) for the
  check, then, after a simulated trigger in the middle of the answer, `generate` again on the full prompt with 3 gold
  passages and the truncated answer, and another attention pass; vs the engine doing the same (prefix reuse, rollback,
  update, one pass per token). Same tokens asserted. `reference_speedup_no_attention_pass` leaves the attention passes
  out of the reference.
* `tokens_per_s` (engine, all signals) and `bandwidth_fraction` = tokens/s x weight bytes / memory read bandwidth
  measured here (torch sum over a 512 MB tensor with the same threads, median of 3 samples taken before, between and
  after the phases); `bandwidth_fraction_1thread` divides by the one-thread read bandwidth instead.
* Where the decode time goes: `gemv_gb_s`, the rate at which torch's own kernel streams the weights when every
  `nn.Linear` runs once on one token (the GEMV bound of this torch build), `decode_vs_gemv_bound` = tokens/s x that
  time, and `step_time_share`, torch.profiler shares of a bare decode step (matmuls, sdpa, KV copies).
Prints progress on stderr and one JSON line last on stdout.
"""
import argparse, copy, json, os, statistics, string, sys, time
from pathlib import Path
os.environ.setdefault('HF_HUB_OFFLINE', '1'); os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('TOKENIZERS_PARALLELISM', 'false')
sys.path.insert(0, str(Path(__file__).parent))
import numpy as np, torch
from tqdm.auto import tqdm
from etc_nb.engine import Engine, fork_cache
from etc_nb.signals import token_entropy
from engine_prompts import DEMOS, EXEMPLARS, case, context_block, questions

def log(*a): print(*a, file=sys.stderr, flush=True)
def med(xs): return float(statistics.median(xs))

def read_bandwidth(threads:int, nbytes=512*2**20, reps=7)->float: # bytes/s, median of `reps` full reads
    old = torch.get_num_threads(); torch.set_num_threads(threads)
    x = torch.ones(nbytes // 4); x.sum(); ts = []
    for _ in range(reps): t = time.perf_counter(); x.sum(); ts.append(time.perf_counter() - t)
    torch.set_num_threads(old)
    return nbytes / med(ts)

def copy_bandwidth(nbytes=512*2**20, reps=5)->float: # bytes/s moved (read + write), numpy copy
    a = np.ones(nbytes // 4, np.float32); b = np.empty_like(a); np.copyto(b, a); ts = []
    for _ in range(reps): t = time.perf_counter(); np.copyto(b, a); ts.append(time.perf_counter() - t)
    return 2 * nbytes / med(ts)

@torch.inference_mode()
def gemv_seconds(model, reps=5)->tuple: # (seconds for one M=1 pass through every nn.Linear, their weight bytes)
    lins = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    xs = [torch.randn(1, l.in_features, device=model.device, dtype=l.weight.dtype) for l in lins]
    run = lambda: [l(x) for l, x in zip(lins, xs)]; run(); ts = []
    for _ in range(reps): t = time.perf_counter(); run(); ts.append(time.perf_counter() - t)
    return med(ts), sum(l.weight.numel() * l.weight.element_size() for l in lins)

@torch.inference_mode()
def step_profile(model, prefix, case_ids, n=8)->dict: # share of decode-step CPU time: matmuls, attention, the rest
    from torch.profiler import profile, ProfilerActivity
    cache = fork_cache(prefix.cache); x = torch.tensor([case_ids], device=model.device)
    x = model(x, past_key_values=cache, use_cache=True, logits_to_keep=1).logits[:, -1].argmax(-1, keepdim=True)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(n): x = model(x, past_key_values=cache, use_cache=True, logits_to_keep=1).logits[:, -1].argmax(-1, keepdim=True)
    ev = prof.key_averages(); tot = sum(e.self_cpu_time_total for e in ev)
    share = lambda f: round(sum(e.self_cpu_time_total for e in ev if f(e.key)) / tot, 3)
    return dict(matmul=share(lambda k: k in ('aten::mm', 'aten::addmm', 'aten::bmm')), attention=share(lambda k: 'scaled_dot_product' in k),
                cache_copy=share(lambda k: k in ('aten::copy_', 'aten::cat')))

def weight_bytes(model)->int: # every parameter once (tied embeddings counted once)
    seen = {}
    for p in model.parameters(): seen[p.data_ptr()] = p.numel() * p.element_size()
    return sum(seen.values())

class ETCStream:
    "Streaming ETC score as the release computes it (`04b_released_code`), updated per token: a cost proxy"
    def __init__(self, session, theta=1.3):
        from etc_nb.signals import stop_words     # spaCy's English list, as the release masks with
        self.s, self.theta, self.stop = session, theta, stop_words()
        self.word, self.H, self.d1, self.d2, self.att, self.fired = [], [], [], [], [], False
    def step(self, st):
        if st.word_start and self.word: self._close()
        self.word.append(st)
    def _close(self):
        w, self.word = self.word, []
        text = ''.join(t.text for t in w).strip().strip(string.punctuation).lower()
        if not text or text in self.stop or not any(c.isalnum() for c in text): return
        H = max(t.entropy for t in w)                                     # word entropy: max over its tokens
        d1 = H - self.H[-1] if self.H else 0.; self.H.append(H)
        prev1 = next((x for x in reversed(self.d1) if x), 0.); self.d1.append(d1)
        d2 = d1 - prev1 if d1 else 0.
        ts = self.s.segments['text'][0]                                   # row-max: attention the word pays to the answer
        a = self.s.attention(w[0].pos, w[-1].pos + 1, ts, w[-1].pos + 1).mean(0).max().item()
        self.att.append(a)
        if not d2: return
        P = self.d2[-1] if self.d2 else 0.; self.d2.append(d2); E = sum(self.d2) / len(self.d2)
        den = abs(d2 - E) + abs(P - E); wt = abs(P - E) / den if den else float('nan')
        alpha = 0.9 + 0.1 * wt; M = alpha * d2 + (1 - alpha) * P
        if a * len(self.att) / sum(self.att) * M > self.theta: self.fired = True

@torch.inference_mode()
def bare_loop(model, prefix, case_ids, n, stock_cache=False)->tuple: # (ids, seconds per decode step after the first)
    cache = copy.deepcopy(prefix.cache) if stock_cache else fork_cache(prefix.cache)
    x, out = torch.tensor([case_ids], device=model.device), []
    for i in range(n):
        if i == 1: t = time.perf_counter()
        o = model(x, past_key_values=cache, use_cache=True, logits_to_keep=1)
        x = o.logits[:, -1].argmax(-1, keepdim=True); out.append(x.item())   # the token on the host (a sync on a GPU)
    return out, (time.perf_counter() - t) / (n - 1)

def engine_run(engine, prefix, case_text, n, etc=True)->tuple: # (ids, seconds per decode step after the first, etc fired)
    s = engine.session(prefix, case=case_text); etc, out = ETCStream(s) if etc else None, []
    for i, st in enumerate(s.generate(n)):
        if i == 0: t = time.perf_counter()                   # forwards 1..n-1 are timed, as in `bare_loop`
        if etc: etc.step(st)
        s.received(); out.append(st.id)                      # the loop reads entropy, RIND's aggregate, the ETC score
    return out, (time.perf_counter() - t) / max(len(out) - 1, 1), etc and etc.fired

def reference_round(model, tok, ids, max_new)->tuple: # (new ids, generate s, attention-pass s)
    t0 = time.perf_counter()
    with torch.inference_mode():
        out = model.generate(torch.tensor([ids]), do_sample=False, max_new_tokens=max_new, stop_strings=['\n'],
                             tokenizer=tok, output_logits=True, return_dict_in_generate=True, pad_token_id=tok.pad_token_id)
        token_entropy(torch.cat(out.logits))
    new = [i for i in out.sequences[0, len(ids):].tolist() if i != tok.eos_token_id]
    t1 = time.perf_counter()
    impl = model.config._attn_implementation; model.set_attn_implementation('eager')
    try:
        with torch.inference_mode():
            att = model(out.sequences, output_attentions=True, use_cache=False).attentions[-1][0]
            att[:, len(ids):].mean(0).max(-1)                          # ETC §2.7: rows of the new tokens, head mean
            del att
    finally: model.set_attn_implementation(impl)
    return new, t1 - t0, time.perf_counter() - t1

def engine_question(engine, prefix, q, max_new)->tuple: # (round-1 ids, kept, round-2 ids, seconds)
    t0 = time.perf_counter()
    s = engine.session(prefix, case=case(q['question'])); etc = ETCStream(s); steps = []
    for st in s.generate(max_new, stop_strings=['\n']): etc.step(st); s.received(); steps.append(st)
    keep = max([i for i, st in enumerate(steps[:len(steps)//2 + 1]) if st.word_start and i > 0], default=1)
    s.rollback(keep)
    s.update(case=case(q['question']), context=context_block(q['passages']), text=s.text_ids)
    etc2, second = ETCStream(s), []
    for st in s.generate(max_new, stop_strings=['\n']): etc2.step(st); s.received(); second.append(st.id)
    return [st.id for st in steps], keep, second, time.perf_counter() - t0

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--questions', type=int, default=20); ap.add_argument('--max-new', type=int, default=32)
    ap.add_argument('--ref-questions', type=int, default=5); ap.add_argument('--threads', type=int, default=None)
    ap.add_argument('--budget', type=float, default=420, help='seconds after which no new reference question starts')
    ap.add_argument('--quick', action='store_true', help='run every phase on tiny sizes in seconds (CI: the code still runs); measures nothing')
    args = ap.parse_args()
    if args.quick: args.questions, args.max_new, args.ref_questions = 1, 12, 1
    demos, bw_bytes = (''.join(f"Question: {q}\nAnswer: {a}\n\n" for q, a in EXEMPLARS[:2]), 16*2**20) if args.quick else (DEMOS, 512*2**20)
    from etc_nb.lm import load_lm                  # here: it needs spaCy (engine_gpu.py imports this file without it)
    if args.threads: torch.set_num_threads(args.threads)
    t_start = time.perf_counter()
    model, tok = load_lm(attn_implementation='sdpa')
    bws = [read_bandwidth(torch.get_num_threads(), bw_bytes)]   # measured again between and after the phases (noisy VM)
    bw_read1, bw_copy = read_bandwidth(1, bw_bytes), copy_bandwidth(bw_bytes)
    log(f"threads {torch.get_num_threads()}, read bandwidth {bws[0]/1e9:.1f} GB/s (1 thread {bw_read1/1e9:.1f}), copy {bw_copy/1e9:.1f} GB/s")
    engine = Engine(model, tok, attention=True)
    t = time.perf_counter(); prefix = engine.prefix(demos); t_prefix = time.perf_counter() - t
    qs = questions(args.questions)
    log(f"demos {len(prefix)} tokens, encoded once in {t_prefix:.1f}s; {len(qs)} questions")

    rows = []                                               # phase A: per-token cost, interleaved
    for i, q in enumerate(tqdm(qs, desc='decode', file=sys.stderr)):
        cids = engine.encode(case(q['question']))
        runs = {}
        order = ['bare', 'engine', 'stock'] if i % 2 else ['engine', 'bare', 'stock']
        for name in order:
            if name == 'engine': ids, dt, _ = engine_run(engine, prefix, case(q['question']), args.max_new)
            else: ids, dt = bare_loop(model, prefix, cids, args.max_new, stock_cache=name == 'stock')
            runs[name] = (ids, dt)
        e_ids = runs['engine'][0]                           # the engine stops at EOS, the bare loops do not
        assert len(e_ids) > 8 and e_ids == runs['bare'][0][:len(e_ids)] == runs['stock'][0][:len(e_ids)], f"question {i}: tokens differ"
        rows.append({k: v[1] for k, v in runs.items()})
    over = [r['engine'] / r['bare'] for r in rows]; vs_stock = [r['engine'] / r['stock'] for r in rows]
    tps = 1 / med([r['engine'] for r in rows])

    bws.append(read_bandwidth(torch.get_num_threads(), bw_bytes))
    refs = []                                               # phase B: reference-style loop vs engine
    for i, q in enumerate(tqdm(qs[:args.ref_questions], desc='reference', file=sys.stderr)):
        if i >= 2 and time.perf_counter() - t_start > args.budget: log(f"budget reached after {i} reference questions"); break
        ids1 = prefix.ids + engine.encode(case(q['question']))
        if i % 2: e = engine_question(engine, prefix, q, args.max_new); new1, g1, a1 = reference_round(model, tok, ids1, args.max_new)
        else: new1, g1, a1 = reference_round(model, tok, ids1, args.max_new); e = engine_question(engine, prefix, q, args.max_new)
        first, keep, second, t_engine = e
        ids2 = prefix.ids + engine.encode(context_block(q['passages'])) + engine.encode(case(q['question'])) + new1[:keep]
        new2, g2, a2 = reference_round(model, tok, ids2, args.max_new)
        assert first == new1 and second == new2, f"reference question {i}: tokens differ"
        refs.append(dict(ref=g1 + a1 + g2 + a2, ref_gen=g1 + g2, engine=t_engine, tokens=len(first) + len(second)))

    bws.append(read_bandwidth(torch.get_num_threads(), bw_bytes)); bw_read = med(bws)
    t_gemv, gemv_bytes = gemv_seconds(model); prof = step_profile(model, prefix, engine.encode(case(qs[0]['question'])))
    def rmed(f): return round(med([f(r) for r in refs]), 2) if refs else None
    res = dict(
        signal_overhead=round(med(over), 3), signal_overhead_iqr=[round(float(x), 3) for x in np.percentile(over, [25, 75])],
        vs_hf_dynamic_cache=round(med(vs_stock), 3),
        reference_speedup=rmed(lambda r: r['ref'] / r['engine']),
        reference_speedup_no_attention_pass=rmed(lambda r: r['ref_gen'] / r['engine']),
        reference_s_per_question=rmed(lambda r: r['ref']), engine_s_per_question=rmed(lambda r: r['engine']),
        tokens_per_s=round(tps, 2), bandwidth_fraction=round(tps * weight_bytes(model) / bw_read, 3),
        bandwidth_fraction_1thread=round(tps * weight_bytes(model) / bw_read1, 3),
        ms_per_token=dict(engine=round(1e3 * med([r['engine'] for r in rows]), 1), bare=round(1e3 * med([r['bare'] for r in rows]), 1),
                          hf_dynamic_cache=round(1e3 * med([r['stock'] for r in rows]), 1)),
        gemv_gb_s=round(gemv_bytes / t_gemv / 1e9, 2), decode_vs_gemv_bound=round(tps * t_gemv, 3), step_time_share=prof,
        read_bandwidth_gb_s=round(bw_read / 1e9, 2), read_bandwidth_samples_gb_s=[round(b / 1e9, 1) for b in bws],
        read_bandwidth_1thread_gb_s=round(bw_read1 / 1e9, 2),
        copy_bandwidth_gb_s=round(bw_copy / 1e9, 2),
        weight_mb=round(weight_bytes(model) / 1e6, 1), demo_tokens=len(prefix), prefix_encode_s=round(t_prefix, 2),
        questions=len(rows), reference_questions=len(refs), max_new_tokens=args.max_new, threads=torch.get_num_threads(),
        model='smollm2-135m fp32 cpu' if model.device.type == 'cpu' else f'smollm2-135m {model.dtype} {model.device}',
        wall_s=round(time.perf_counter() - t_start, 1), **({'quick': True} if args.quick else {}))
    print(json.dumps(res))

if __name__ == '__main__': main()
