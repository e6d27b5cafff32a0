#!/usr/bin/env python
"""Throughput of the batched dynamic-RAG loop (`etc_nb.batch`) against the sequential one, with record parity.

    python benchmarks/throughput.py                 # CPU: 100 2WikiMultihopQA questions x {etc, dragin}, B = 1, 4, 8, 16, 32
    python benchmarks/throughput.py --quick         # about a minute: 2 questions, B = 1, 2, and the --device path on a tiny model (CI)
    python benchmarks/throughput.py --device cuda   # decode tokens/s at B = 1, 8, 32, 64, 128 on a random Llama-2-7B-shaped
                                                    # bf16 model, with and without CUDA graphs, vs HF `generate` with a
                                                    # static cache and the memory-bandwidth bound; then the full loop end
                                                    # to end vs the DRAGIN-style reference (--quick: tiny model, CPU)

CPU mode: the same questions through the sequential runner (B = 1) and the batched runner at each B, in one run; per B
questions/hour, seconds and peak RSS; then `identical_fraction` (share of (question, method) records whose prediction,
token ids, retrieval events, queries and passages equal the sequential run's), and the divergences, each *explained*
when it starts at a token whose top-1 minus top-2 logit in the sequential run is below 1e-3 (`etc_nb.compare.compare_runs`).
Prints one JSON line last (also written to $OUT/throughput.json when OUT is set). The `--device cuda` mode needs
torch, transformers and etc_nb's own light dependencies (fastcore, rank_bm25, scipy, pandas): on a GPU machine without
the project installed, `--inputs` brings fastcore, rank_bm25 and greenlet (importing etc_nb does not import spaCy).
"""
import argparse, gc, json, os, resource, sys, time
here = os.path.dirname(os.path.abspath(__file__)); sys.path[:0] = [os.path.dirname(here), here]   # (etc_nb; gpu_rehearsal)
import torch

def peak_rss_gb()->float: return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20

def cpu_mode(n:int, batches:list, methods:list)->dict:
    from etc_nb.compare import compare_runs
    from etc_nb.data import load_dataset
    from etc_nb.pipeline import answer_questions, get_loop
    loop, qs = get_loop('2wikimultihopqa'), list(load_dataset('2wikimultihopqa', n=n))
    runs, out = {}, dict(questions=n, methods=methods, threads=torch.get_num_threads(), per_batch={})
    for B in batches:
        t0 = time.perf_counter(); recs = []
        for name in methods: recs += list(answer_questions(loop, loop.method(name), qs, batch_size=B))
        wall = time.perf_counter() - t0; runs[B] = recs
        row = dict(wall_s=round(wall, 1), questions_per_hour=round(3600 * len(recs) / wall),
                   tokens_per_s=round(sum(r['counters']['tokens'] for r in recs) / wall, 1), peak_rss_gb=round(peak_rss_gb(), 2))
        if B != batches[0]:
            cmp = compare_runs(runs[batches[0]], recs)
            row.update({k: cmp[k] for k in ('identical_fraction', 'explained_divergences', 'unexplained_divergences')})
            row['speedup'] = round(out['per_batch'][batches[0]]['wall_s'] / wall, 2)
        out['per_batch'][B] = row; print(B, row, flush=True)
    best = max(batches[1:], key=lambda b: out['per_batch'][b]['speedup'])
    b = out['per_batch'][best]
    out.update(speedup_vs_sequential=b['speedup'], best_batch=best, identical_fraction=b['identical_fraction'],
               unexplained_divergences=sum(out['per_batch'][x]['unexplained_divergences'] for x in batches[1:]),
               peak_rss_gb=round(peak_rss_gb(), 2))
    return out

def random_model(device:str, quick:bool, dtype=None):
    "Llama-2-7B-shaped bf16 model with random weights on CUDA (a tiny one for --quick), and a tokenizer of its vocabulary size"
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
    from tokenizers import Tokenizer, models, pre_tokenizers, decoders
    shape = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4) if quick else \
            dict(hidden_size=4096, intermediate_size=11008, num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32)
    vocab = {chr(0x100 + i): i for i in range(32000)}; vocab['<s>'], vocab['</s>'] = 32000, 32001
    t = Tokenizer(models.WordLevel(vocab, unk_token='<s>')); t.pre_tokenizer = pre_tokenizers.Split('', 'isolated')
    tok = PreTrainedTokenizerFast(tokenizer_object=t, eos_token='</s>', pad_token='</s>')
    cfg = LlamaConfig(**shape, vocab_size=32002, max_position_embeddings=4096, eos_token_id=None, pad_token_id=32001)
    torch.manual_seed(0)
    dtype, saved = dtype or (torch.bfloat16 if device == 'cuda' else torch.float32), torch.get_default_dtype()
    torch.set_default_dtype(dtype)                    # made in place on the device: a 7B model never sits on the host
    try:
        with torch.device(device): model = LlamaForCausalLM(cfg).eval()
    finally: torch.set_default_dtype(saved)
    model.generation_config.eos_token_id = None
    return model, tok

def our_decode(eng, pre, cases:list, new:int)->tuple:
    "Seconds for every case to decode `new` tokens in the engine's slots, (token, entropy) per case, and the scheduler's stats"
    from etc_nb.batch import Scheduler
    def job(case): return lambda: [(st.id, st.entropy) for st in eng.session(pre, text=case).generate(new)]
    sched = Scheduler(eng)
    sync(); t0 = time.perf_counter(); out = dict(sched.run([job(c) for c in cases])); sync()
    return time.perf_counter() - t0, [out[i] for i in range(len(cases))], sched.stats

def sync():
    if torch.cuda.is_available(): torch.cuda.synchronize()

def free_memory():
    gc.collect()
    if torch.cuda.is_available(): torch.cuda.empty_cache()

def random_texts(seed:int, *lengths:int)->list:
    "Texts of random vocabulary characters (one token each), one per length"
    g = torch.Generator().manual_seed(seed)
    return [''.join(chr(0x100 + i) for i in torch.randint(0, 32000, (n,), generator=g).tolist()) for n in lengths]

def marginal_rate(run, B:int, lo:int, hi:int)->float:
    "Decode tokens/s without the prompt's cost: B x (hi - lo) new tokens over the time difference of the two lengths"
    run(lo); run(hi)                                                # warm-up (allocations, kernels, graphs, compilation)
    return round(B * (hi - lo) / (run(hi) - run(lo)), 1)

def decode_rates(model, tok, B:int, prompt:int, lo:int, hi:int)->dict:
    "Aggregate decode tokens/s at batch B: the batched engine (signals on) with and without CUDA graphs, HF static-cache generate"
    from etc_nb.batch import BatchEngine
    prefix_text, *cases = random_texts(B, prompt, *[8] * B)
    res = {}
    for graphs in (True, False):
        eng = BatchEngine(model, tok, slots=B, capacity=prompt + hi + 64, cuda_graphs=graphs); pre = eng.prefix(prefix_text)
        runs = {}
        def ours(n): runs[n] = our_decode(eng, pre, cases, n); return runs[n][0]
        key = 'graphs' if graphs else 'no_graphs'
        res[key] = marginal_rate(ours, B, lo, hi)
        t, _, st = runs[hi]                                                 # the timed run of `hi` tokens
        res[key + '_step_share'] = round(st['decode_s'] / t, 3)            # the rest: the sessions' Python
        if graphs: res['pool_bytes'] = eng._pool.nbytes                    # keys/values held: the prefix once, B x own
        ids = torch.tensor([pre.ids + eng.encode(c) for c in cases], device=model.device)
        del eng, pre; free_memory()
    res['hf_static_generate'] = hf_static_rate(model, ids, B, lo, hi, compiled=False)
    res['hf_static_generate_compiled'] = hf_static_rate(model, ids, B, lo, hi, compiled=True)
    return res

HF_STATIC = ("hf_static_generate: HF generate with a static cache, eager (disable_compile=True), the baseline the "
             "ratios use; hf_static_generate_compiled: the same with transformers' automatic torch.compile (CUDA "
             "only; compiled once per batch size, in the warm-up), a second line, not in the ratios")

def hf_static_rate(model, ids, B:int, lo:int, hi:int, compiled:bool)->float|str|None:
    "Decode tokens/s of HF `generate` with a static cache, eager or compiled; None if its cache does not fit, else why it failed"
    if compiled and model.device.type != 'cuda': return 'not run: transformers compiles generate on CUDA only'
    kw = dict(do_sample=False, cache_implementation='static', pad_token_id=32001, disable_compile=not compiled)
    def hf(n):
        with torch.inference_mode():
            sync(); t0 = time.perf_counter(); model.generate(ids, max_new_tokens=n, min_new_tokens=n, **kw); sync()
        return time.perf_counter() - t0
    try: return marginal_rate(hf, B, lo, hi)
    except torch.OutOfMemoryError: return None                       # its static cache does not fit at B
    except Exception as e: return f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    finally: free_memory()

def copy_bandwidth(device:str, nbytes:int)->float:
    "Bytes/s a device-to-device copy moves (read + write), best of 5: the memory bandwidth a decode step can reach"
    src = torch.empty(nbytes // 2, dtype=torch.int16, device=device); dst = torch.empty_like(src); best = 0.
    for _ in range(5):
        sync(); t0 = time.perf_counter(); dst.copy_(src); sync(); best = max(best, 2 * nbytes / (time.perf_counter() - t0))
    del src, dst; free_memory()
    return best

def bandwidth_bound(model, B:int, prompt:int, own:float, bandwidth:float)->float:
    "Decode tokens/s if a step only read the weights, the prefix's keys/values once and each row's own ones, at full bandwidth"
    from etc_nb.memory import kv_bytes_per_position
    step = model.get_memory_footprint() + kv_bytes_per_position(model) * (prompt + B * own)
    return round(B * bandwidth / step, 1)

def end_to_end(quick:bool, inputs=None)->dict: # `inputs`: the unpacked `gpu_rehearsal.py --pack-inputs` (GPU machine)
    "The full loop (7 methods, closed-corpus BM25) through the CLI on the LLaMA-2-7B shape against the DRAGIN-style reference loop (`gpu_rehearsal.py`)"
    import argparse, shutil, tempfile
    from pathlib import Path
    import gpu_rehearsal as g
    dev = 'cuda' if torch.cuda.is_available() and not quick else 'cpu'
    a = argparse.Namespace(quick=quick, max_layers=None, device=dev, dtype=torch.bfloat16 if dev == 'cuda' else torch.float32,
                           n=2 if quick else 8, timeout_s=600, reference_s=600 if quick else 60)
    a.batch_size, name, work = a.n, 'llama-2-7b-chat', Path(tempfile.mkdtemp(prefix='throughput_e2e_'))
    try:
        from etc_nb.data import load_dataset
        qs, (tok, _) = list(load_dataset(g.DATASET, n=a.n)), g.load_tokenizer('llama-2', inputs)
        g.build(name, a, tok, work/name)
        cli = g.cli_phase(name, work/name, a, qs, work); ref = g.reference_phase(name, work/name, a, qs, work)
    finally: shutil.rmtree(work, ignore_errors=True)
    return dict(questions=a.n, batch_size=a.batch_size, end_to_end_questions_per_hour=cli['questions_per_hour'],
                **g.compare(cli, ref, a.n),          # dragin's span in that run against the reference, same questions
                what='end_to_end: the 7 Table 2 methods through etc_nb_run (process start and model load included); '
                     'dragin: its span in that batched run; reference: ' + ref['what'])

def graph_parity(device:str, B:int=4, new:int=24)->dict:
    "The captured steps against the plain one, and B sequences together against each alone (B = 1): a small fp32 model with sharpened random weights (few near-ties); staggered case lengths and token counts, a pool that grows"
    from etc_nb.batch import BatchEngine, Scheduler
    model, tok = random_model(device, True, dtype=torch.float32)
    with torch.no_grad():
        for n, p in model.named_parameters():
            if p.dim() == 2: p.mul_(4)
    pre_text, *cases = random_texts(1, 64, *[8 + 3 * (i % 16) for i in range(B)])
    news, out, ahead = [new + 8 * (i % 4) for i in range(B)], {}, {}   # rows finish at different steps: buckets shrink
    for key, slots, graphs in (('graphs', B, True), ('plain', B, False), ('alone', 1, True)):
        eng = BatchEngine(model, tok, slots=slots, cuda_graphs=graphs); pre = eng.prefix(pre_text)
        eng.capacity = len(pre.ids) + 16                               # grows several times, graphs alive
        def job(case, n): return lambda: [(st.id, st.entropy) for st in eng.session(pre, text=case).generate(n)]
        sched = Scheduler(eng); res = dict(sched.run([job(c, n) for c, n in zip(cases, news)]))
        out[key] = [res[i] for i in range(B)]; ahead[key] = round(sched.stats['ahead_taken'] / sched.stats['decoded'], 3)
    same = lambda a, b: sum([x for x, _ in u] == [x for x, _ in v] for u, v in zip(a, b)) / B
    diff = lambda a, b: max(abs(x[1] - y[1]) for u, v in zip(a, b) for x, y in zip(u, v))
    return dict(sequences=B, new_tokens=news, same_tokens=same(out['graphs'], out['plain']),
                max_entropy_diff=diff(out['graphs'], out['plain']), same_tokens_vs_b1=same(out['graphs'], out['alone']),
                max_entropy_diff_vs_b1=diff(out['graphs'], out['alone']), decoded_ahead_share=ahead['graphs'])

def device_mode(device:str, quick:bool, inputs=None)->dict:
    model, tok = random_model(device, quick)
    prompt, lo, hi, batches = (64, 4, 8, [1, 2]) if quick else (1500, 32, 96, [1, 8, 32, 64, 128])
    bw = copy_bandwidth(device, 2**24 if quick else 2**30)
    import transformers
    out = dict(device=torch.cuda.get_device_name() if device == 'cuda' else 'cpu', torch=torch.__version__,
               transformers=transformers.__version__, model='tiny random Llama' if quick else
               'random Llama-2-7B shape, bf16', prompt_tokens=prompt, new_tokens=[lo, hi],
               rate='decode tokens/s = B x (hi - lo) / (time for hi new tokens - time for lo): the prompt\'s cost cancels',
               per_batch={})
    for B in batches:
        out['per_batch'][B] = decode_rates(model, tok, B, prompt, lo, hi); print(B, out['per_batch'][B], flush=True)
    out['graph_parity'] = graph_parity(device, batches[-1]); print(out['graph_parity'], flush=True)
    own = 8 + (lo + hi) / 2                                           # a row's own positions, on average over the timed tokens
    out.update(copy_bandwidth_gb_s=round(bw / 1e9, 1),
               decode_tokens_per_s={B: r['graphs'] for B, r in out['per_batch'].items()},
               hf_static_tokens_per_s={B: r['hf_static_generate'] for B, r in out['per_batch'].items()},
               hf_static_compiled_tokens_per_s={B: r['hf_static_generate_compiled'] for B, r in out['per_batch'].items()},
               hf_static=HF_STATIC,
               bandwidth_bound_tokens_per_s={B: bandwidth_bound(model, B, prompt, own, bw) for B in batches})
    mid, top = (32, 128) if not quick else (batches[-1], batches[-1])
    hf_mid = out['hf_static_tokens_per_s'][mid]
    hf_mid = hf_mid if isinstance(hf_mid, float) else None
    out.update(decode_tokens_per_s_at_max_batch=out['decode_tokens_per_s'][top], max_batch=top,
               vs_hf_static_generate=hf_mid and round(out['decode_tokens_per_s'][mid] / hf_mid, 2),
               max_batch_vs_hf_static_b32=hf_mid and round(out['decode_tokens_per_s'][top] / hf_mid, 2))
    del model; free_memory()
    out['end_to_end'] = end_to_end(quick, inputs); print(out['end_to_end'], flush=True)
    return out

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--quick', action='store_true', help='seconds-long run on tiny sizes (CI)')
    p.add_argument('--device', default='cpu', choices=['cpu', 'cuda'], help='cpu: the loop on the bundled model; cuda: decode rates')
    p.add_argument('--n', type=int, default=100, help='questions (CPU mode)')
    p.add_argument('--inputs', help="--device cuda on a machine without etc_nb's cache: gpu_rehearsal.py --pack-inputs's archive")
    a = p.parse_args()
    t0 = time.perf_counter()
    if a.inputs:                                # first: it puts the modules the machine lacks on the path, and the data
        import gpu_rehearsal, tempfile; from pathlib import Path
        a.inputs = gpu_rehearsal.unpack_inputs(Path(a.inputs), Path(tempfile.mkdtemp(prefix='throughput_inputs_')))
    if a.device == 'cuda':
        res = device_mode('cuda' if torch.cuda.is_available() else 'cpu', a.quick or not torch.cuda.is_available(), a.inputs)
    else: res = cpu_mode(2 if a.quick else a.n, [1, 2] if a.quick else [1, 4, 8, 16, 32], ['etc', 'dragin'])
    if a.quick and a.device == 'cpu': res['device_path'] = device_mode('cpu', True)   # CI: the GPU path's code, tiny, on CPU
    res['wall_s'] = round(time.perf_counter() - t0, 1)
    line = json.dumps(res)
    if os.environ.get('OUT'): open(os.path.join(os.environ['OUT'], 'throughput.json'), 'w').write(line + '\n')
    print(line)
