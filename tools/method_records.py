"""Every method's records on a few bundled questions, for comparing two versions of the method definitions (issue 66).

    python tools/method_records.py OUT_DIR [--n 3] [--max_new_tokens 32]

Writes OUT_DIR/<method>.json (the loop's traces of the bundled 2WikiMultihopQA sample's first n questions, `wall_s`
dropped) and OUT_DIR/configs.json (every method resolved for every dataset with two models, and the method lists the
experiments and tests read). Two versions agree when `diff -r` of their OUT_DIRs is empty. Fails if a method that
retrieves answered every question without a retrieval (the comparison would not reach its query and rounds)."""
import argparse, json, sys
from collections.abc import Mapping
from pathlib import Path

def _dump(obj, path:Path): path.write_text(json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + '\n')

def _drop_wall(tr:dict)->dict: return {k: v for k, v in tr.items() if k != 'wall_s'}

def config_tables()->dict:
    "Each method resolved for each dataset and two models, and the lists read elsewhere"
    from etc_nb import config, experiments, triggers
    out = {'METHODS': list(config.METHODS), 'FORMULATIONS': list(config.FORMULATIONS),
           'method_definitions': config.method_definitions(),
           'TRIGGERS': {k: [c.__name__, p, t] for k, (c, p, t) in triggers.TRIGGERS.items()}}
    for k in ('GRIDS', 'MAIN_METHODS', 'ABLATION_METHODS', 'BIOMEDICAL_METHODS', 'REFERENCE_METHODS', 'TUNED_FROM',
              'SWEEP_TARGETS'):
        out[k] = getattr(experiments, k)
    out['ROWS.tuned'] = {r: list(v.tuned_methods() if hasattr(v, 'tuned_methods') else v.tuned)
                        for r, v in experiments.ROWS.items()}
    cfgs = {}
    for m in config.METHODS:
        for d in ('2wikimultihopqa', 'hotpotqa', 'strategyqa', 'iirc', 'bioasq', 'pubmedqa'):
            for model in ('smollm2-135m', 'llama2-7b'):
                try: cfgs[f"{m}|{d}|{model}"] = config.method_config(m, d, model).to_dict()
                except Exception as e: cfgs[f"{m}|{d}|{model}"] = f"{type(e).__name__}: {e}"
    out['method_config'] = cfgs
    out['order'] = {k: list(getattr(experiments, k)) for k in ('GRIDS', 'SWEEP_TARGETS', 'TUNED_FROM')}
    rows = list(experiments.ROWS)
    out['tuning_jobs'] = [[j.row, j.split, j.name] for j in experiments.tuning_jobs(rows, here=False)]
    for e in ('backbone', 'main', 'ablation', 'alpha', 'biomedical'):
        for model in ('qwen2.5-coder-0.5b-bf16', 'llama2-7b'):
            t = 'biomedical' if e == 'biomedical' else 'general'
            try: out[f'jobs|{e}|{model}'] = [[j.row, j.split, j.name] for j in experiments.experiment_jobs(
                      e, model, [r for r, v in experiments.ROWS.items() if v.table == t], here=False)]
            except Exception as ex: out[f'jobs|{e}|{model}'] = f"{type(ex).__name__}: {ex}"
    return json.loads(json.dumps(out, sort_keys=True, default=lambda o: dict(o) if isinstance(o, Mapping) else list(o)))

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('out'); p.add_argument('--n', type=int, default=3); p.add_argument('--max_new_tokens', type=int, default=32)
    a = p.parse_args(argv)
    out = Path(a.out); out.mkdir(parents=True, exist_ok=True)
    from etc_nb.config import METHODS
    from etc_nb.corpus import Corpus
    from etc_nb.data import load_dataset
    from etc_nb.loop import Loop
    from etc_nb.pipeline import corpus_info, get_loop
    from etc_nb.retrieval import DenseIndex
    _dump(config_tables(), out/'configs.json')
    loop = get_loop('2wikimultihopqa'); qs = load_dataset('2wikimultihopqa', n=a.n)
    small = Corpus.from_passages(loop.retriever('bm25').corpus[:300], name='2wiki-first300')
    loops = {'bm25': loop, 'dense': Loop(loop.engine, loop.prompt, {'dense': DenseIndex(small)},
                                         corpus=corpus_info(small))}
    silent = []
    for m in METHODS:
        cfg = loop.method(m, max_new_tokens=a.max_new_tokens)
        lp = loops[cfg.retriever]
        trs = [_drop_wall(lp(q, cfg)) for q in qs]
        _dump(trs, out/f"{m}.json")
        n = sum(len(t['retrievals']) for t in trs)
        print(f"{m}: {n} retrievals", flush=True)
        if m != 'wo_rag' and not any(e['kind'] == 'trigger' or m in ('single_rag', 'lrag') for t in trs
                                     for e in t['retrievals']):
            silent.append(m)
    if silent: sys.exit(f"no retrieval by {silent}: raise --max_new_tokens or --n")

if __name__ == '__main__': main()
