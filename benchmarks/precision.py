#!/usr/bin/env python
"""bf16 against fp32 on the CPU: the batched dynamic-RAG loop with the same weights in both precisions, in one run.

    python benchmarks/precision.py                  # qwen2.5-coder-0.5b, ETC α = 0.7, 2Wiki validation [500, 532), B = 32
    python benchmarks/precision.py --quick          # seconds: the bundled SmolLM2, 2 questions (CI; measures nothing)

The fp32 loop is the runner's (`get_loop`); the bf16 loop is the same prompt and retrievers over `load_lm(model,
dtype=torch.bfloat16)`, which is what the bundled precision variant `qwen2.5-coder-0.5b-bf16` loads. Per precision: wall
seconds, questions/hour, EM/F1 and retrievals per question; then `speedup_bf16` (fp32 wall ÷ bf16 wall), the share of
questions with the same generated text (`same_text`, the records' `prediction`) and the same extracted answer
(`same_answer`), and of identical records (`etc_nb.compare.compare_runs`: prediction, tokens, retrieval events). Then batch invariance in bf16: the first `--parity` questions answered one at a
time against the same questions in the batched bf16 run (`bf16_batch_parity`; fp32's is `throughput.py`'s, 200 of 200
identical), since a resumed run groups its questions differently. bf16 is fast only where the CPU has AVX512-BF16
(`cpu_flags` says).
Prints one JSON line last (also written to $OUT/precision.json when OUT is set).
"""
import argparse, json, os, sys, time
here = os.path.dirname(os.path.abspath(__file__)); sys.path[:0] = [os.path.dirname(here)]
import torch

def cpu_flags()->list:
    try: flags = next(l for l in open('/proc/cpuinfo') if l.startswith('flags')).split()
    except (OSError, StopIteration): return []
    return sorted(f for f in flags if f in ('avx2', 'avx512f', 'avx512_bf16', 'amx_bf16'))

def answer(loop, questions:list, batch:int, **params)->tuple: # (records, wall seconds)
    from etc_nb.pipeline import answer_questions
    t0 = time.perf_counter()
    recs = list(answer_questions(loop, loop.method('etc', **params), questions, batch_size=batch))
    return recs, time.perf_counter() - t0

def same(a:list, b:list)->dict: # shares of a's questions whose generated text / extracted answer equal b's
    by = {r['qid']: r for r in b}
    return {f'same_{k}': round(sum(r[f] == by[r['qid']][f] for r in a) / len(a), 3) for k, f in (('text', 'prediction'), ('answer', 'answer'))}

def measure(model:str, n:int, start:int, batch:int, alpha:float, parity:int)->dict:
    from etc_nb.compare import compare_runs
    from etc_nb.data import load_dataset
    from etc_nb.engine import Engine
    from etc_nb.lm import compute_note, load_lm
    from etc_nb.loop import Loop
    from etc_nb.pipeline import get_loop
    qs = list(load_dataset('2wikimultihopqa', n=n, variant='hipporag', start=start))
    fp32 = get_loop('2wikimultihopqa', model, 'hipporag')
    bf16 = Loop(Engine(*load_lm(model, dtype=torch.bfloat16)), fp32.prompt, fp32._retrievers, fp32.dataset, fp32.model, fp32.corpus)
    out, runs = dict(model=model, questions=n, start=start, batch=batch, alpha=alpha, threads=torch.get_num_threads(), cpu_flags=cpu_flags(),
               bf16_products=compute_note(bf16.engine.model)['bf16']), {}   # native, or emulated in fp32 (02_lm)
    for name, loop in (('fp32', fp32), ('bf16', bf16)):
        recs, wall = answer(loop, qs, batch, alpha=alpha); runs[name] = recs
        out[name] = dict(wall_s=round(wall, 1), questions_per_hour=round(3600 * n / wall), EM=round(sum(r['em'] for r in recs) / n, 3),
                         F1=round(sum(r['f1'] for r in recs) / n, 3), retrievals=round(sum(len(r['retrievals']) for r in recs) / n, 2))
        print(name, out[name], flush=True)
    cmp = compare_runs(runs['fp32'], runs['bf16'])
    out.update(speedup_bf16=round(out['fp32']['wall_s'] / out['bf16']['wall_s'], 2), **same(runs['fp32'], runs['bf16']),
               identical_fraction=round(cmp['identical_fraction'], 3))
    one, _ = answer(bf16, qs[:parity], 1, alpha=alpha)
    batched = {r['qid']: r for r in runs['bf16']}; par = compare_runs(one, [batched[r['qid']] for r in one])
    out['bf16_batch_parity'] = dict(questions=parity, identical_fraction=round(par['identical_fraction'], 3), **same(one, runs['bf16']),
                                    explained_divergences=par['explained_divergences'], unexplained_divergences=par['unexplained_divergences'])
    print('bf16 B=1 vs batched', out['bf16_batch_parity'], flush=True)
    return out

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--quick', action='store_true', help='seconds-long run on tiny sizes (CI); measures nothing')
    p.add_argument('--model', default='qwen2.5-coder-0.5b', help='an fp32 model name (the bf16 copy is made from it)')
    p.add_argument('--n', type=int, default=32, help='questions')
    p.add_argument('--start', type=int, default=500, help="first question (default: the validation slice's)")
    p.add_argument('--batch', type=int, default=32, help='questions decoded together')
    p.add_argument('--alpha', type=float, default=0.7, help="ETC's α (Qwen2.5-Coder's tuned 2Wiki value)")
    p.add_argument('--parity', type=int, default=16, help='bf16 questions answered one at a time too (batch invariance)')
    a = p.parse_args()
    t0 = time.perf_counter()
    res = measure('smollm2-135m', 2, 0, 2, a.alpha, 1) if a.quick else measure(a.model, a.n, a.start, a.batch, a.alpha, a.parity)
    res['wall_s'] = round(time.perf_counter() - t0, 1)
    if a.quick: res['quick'] = True
    line = json.dumps(res)
    if os.environ.get('OUT') and not a.quick: open(os.path.join(os.environ['OUT'], 'precision.json'), 'w').write(line + '\n')
    print(line)
