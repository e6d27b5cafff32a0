#!/usr/bin/env python
"""SeaKR's released pure parts run as an oracle: the release's side of `18b_seakr`'s parity table.

The released files are read from a fetched git snapshot of THU-KEG/SeaKR (`git show COMMIT:PATH`) into a temporary
folder and imported from there; none of their code enters the project. vLLM and the retriever are stood in for by
empty stubs (the parts run here never call them), and `spacy.load` returns the project's pipeline.
Parts run: `LLMEngine._compute_eigen_score` (`vllm_uncertainty/vllm/engine/llm_engine.py`, lifted out of its class),
and from `SEAKR/reasoner.py`'s `MultiHopReasoner`: `_retrieve` (with `_build_query`, `_restruct_tokens`,
`_filter_words`; the retriever stub records the query), `_check_final_answer`, `filter_last_step`, `compare_answer`,
and `solve` itself on 24 2Wiki questions (the release's `Dataset.__call__` without exemplars), its `call_llm` and
retriever replaced by `etc_nb.seakr`'s hashed stand-ins, which `18b_seakr` hands to `seakr_solve` too.

  python tools/seakr_oracle.py --git /work/.mirror/THU-KEG+SeaKR/repo --out data/release_parity/seakr_pure.json

The output holds each case's inputs and the release's outputs; `18b_seakr` recomputes our side and compares. Needs
`$ETC_NB_DATA` for the 24 questions (the bundled sample has 12).
"""
import argparse, ast, json, logging, math, subprocess, sys, tempfile, types
from pathlib import Path

COMMIT = 'd75fe707d22df4798794a8a8ae0040764e32b0d7'

def _show(git:str, path:str)->str:
    return subprocess.run(['git', '--git-dir', git, 'show', f'{COMMIT}:{path}'], capture_output=True, text=True,
                          check=True).stdout

def _stub_vllm():
    "Empty stand-ins for the vLLM names reasoner.py and utils.py import"
    from dataclasses import dataclass
    @dataclass
    class Logprob:
        logprob:float; rank:int|None=None; decoded_token:str|None=None
    mods = {n: types.ModuleType(n) for n in ('vllm', 'vllm.sequence', 'vllm.utils')}
    mods['vllm'].AsyncLLMEngine = mods['vllm'].SamplingParams = object
    mods['vllm.sequence'].Logprob, mods['vllm.utils'].merge_async_iterators = Logprob, None
    sys.modules.update(mods)
    return Logprob

def _release(git:str):
    "The release's eigen-score function and `MultiHopReasoner` module, imported from a temporary copy"
    import spacy, torch, numpy as np
    from etc_nb.core import load_nlp
    nlp = load_nlp(); spacy.load = lambda name, *a, **k: nlp
    Logprob = _stub_vllm()
    tmp = Path(tempfile.mkdtemp(prefix='seakr-release-')); pkg = tmp/'SEAKR'; pkg.mkdir()
    for f in ('reasoner.py', 'utils.py', 'dataset.py'): (pkg/f).write_text(_show(git, f'SEAKR/{f}'))
    (pkg/'__init__.py').write_text(''); (pkg/'retriever.py').write_text('class BM25: pass\n')
    sys.path.insert(0, str(tmp))
    import SEAKR.reasoner as reasoner, SEAKR.utils as utils, SEAKR.dataset as dataset
    reasoner.dataset_module = dataset
    src = _show(git, 'vllm_uncertainty/vllm/engine/llm_engine.py')
    fn = next(n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef) and n.name == '_compute_eigen_score')
    ns = dict(torch=torch); exec(compile(ast.Module([fn], []), 'llm_engine.py', 'exec'), ns)
    return ns['_compute_eigen_score'], reasoner, utils, Logprob

def eigen_vectors(case:dict):
    "The vectors of an eigen case, from its seed (the notebook builds them the same way)"
    import numpy as np
    z = np.random.default_rng(case['seed']).normal(size=(case['k'], case['d'])).astype(np.float32) * case['scale']
    return np.repeat(z[:1], case['k'], 0) if case['same'] else z

EIGEN = [dict(seed=s, k=k, d=d, scale=sc, same=same) for s, k, d, sc, same in
         [(0, 20, 576, 1.0, False), (1, 20, 576, 0.05, False), (2, 4, 64, 1.0, False), (3, 4, 64, 0.01, False),
          (4, 20, 576, 1.0, True), (5, 3, 4096, 0.1, False), (6, 20, 4096, 0.02, False)]]
FINALS = ["So the answer is: London, England.", "He was born in 1970. 1970 is the answer", "So the answer is London",
          "", "Thus, the answer is Christopher Nolan.", "The film was released in 2010. So the answer is 2010.",
          "Nolan directed it. Nolan is the answer.", "THE ANSWER IS yes, it is."]
FILTERS = ["Thus the answer is 1970 so he was born in London", "Who directed the film Inception and when was he born?",
           "", "Is the director of film Polish-Russian War older than the director of film Inception?",
           "So the answer is Christopher Nolan"]
QUERIES = [  # question, previous step, failed step text, queries searched before
    ("Who directed the film Inception?", "", "The film Inception was directed by Christopher Nolan.", []),
    ("When was the director of Inception born?", "Inception was directed by Christopher Nolan.",
     "Christopher Nolan was born on 30 July 1970. He is British.", []),
    ("Who is older, Nolan or Spielberg?", "", "", []),
    ("Who is older, Nolan or Spielberg?", "", "He don't know the answer.", []),
    ("Where was the father of Lothair II born?", "Lothair II's father was Lothair I.",
     "Lothair I was born in Altdorf, Bavaria in 795.", []),
    ("Who directed the film Inception?", "", "", ["directed film Inception"]),
]
STEPS = ["Nolan directed it. So the answer is London.", "So the answer is London.", "He was born in 1970. Thus 1970 is the answer. Yes."]
CHOICES = [("london", -7, "paris", -6), ("london", -6, "paris", -7), ("london", -6, "paris", -6), (None, -9, "paris", 0),
           ("london", 0, "Unknown", -9), ("an unknown man", -9, "paris", 0)]

def query_case(tok, i:int, case)->dict:
    "A query case's inputs: the failed step's tokens (the bundled tokenizer's) and seeded probabilities"
    import numpy as np
    q, prev, text, searched = case
    ids = tok.encode(text, add_special_tokens=False) if text else []
    rng = np.random.default_rng(100 + i)
    probs = [float(p) for p in np.where(rng.random(len(ids)) < 0.5, 0.9 + 0.1 * rng.random(len(ids)), rng.random(len(ids)))]
    return dict(question=q, previous=prev, text=text, searched=searched, tokens=[tok.decode([t]) for t in ids], probs=probs)

def questions(n:int)->list:
    from etc_nb.data import load_dataset
    return [q.question for q in load_dataset('2wikimultihopqa', n=n)]

def solve_case(R, U, Logprob, question:str)->dict:
    "`MultiHopReasoner.solve` on one question, its model call and retriever replaced by the hashed stand-ins"
    import asyncio
    from etc_nb.seakr import hashed_model, hashed_search
    class NoShot(R.dataset_module.Dataset):
        examples = []
        def load_data(cls, file_path=None): return []
    calls = []
    def retrieve(queries, topk, max_query_length):
        hits = hashed_search(queries[0]); return [[i for i, _ in hits]], [[d for _, d in hits]]
    r = R.MultiHopReasoner('q', question, NoShot(10), None, types.SimpleNamespace(retrieve=retrieve))
    async def call_llm(prompt, stop_tokens):
        calls.append(prompt); o = hashed_model(prompt, stop_tokens)
        lps = [{0: Logprob(math.log(p), 1, t)} for t, p in zip(o['tokens'], o['probs'])] + [{2: Logprob(0.0, 1, '')}]
        u = U.UncertaintyScore(perplexity=0, logprobs=lps, energy_score=0, eigen_score=o['eigen'], ln_entropy=0)
        return U.LLMOutputWithUncertainty(greedy_response=o['text'], sample_responses=[], uncertainty=u)
    r.call_llm = call_llm
    try: out = asyncio.run(r.solve(max_reasoning_steps=7, max_docs=5)); err = None
    except Exception as e: out, err = {}, f"{type(e).__name__}: {e}"
    return dict(question=question, answer=out.get('Final Answer'), step_answer=r.final_step_answer,
                read_answer=r.final_read_answer, doc_ids=r.doc_id_list, queries=sorted(r.searched_queries),
                steps=[s.content for s in r.running_steps], calls=len(calls), error=err)

def run(git:str, out:str):
    import torch
    from etc_nb.lm import load_lm
    eigen_fn, R, U, Logprob = _release(git)
    _, tok = load_lm()
    def reasoner(question='', steps=()):
        r = object.__new__(R.MultiHopReasoner)
        r.question, r.prob_threshold, r.logger = question.replace('.', ' '), 0.1, logging.getLogger('seakr-oracle')
        r.running_steps = [U.Step(status=U.StepStatus.DIRECT_SUCCESS, content=s) for s in steps]
        return r
    res = dict(commit=COMMIT, eigen=[], finals=[], filters=[], queries=[], last_steps=[], choices=[])
    for c in EIGEN:
        z = torch.tensor(eigen_vectors(c))
        res['eigen'].append(dict(c, score=eigen_fn(types.SimpleNamespace(eigen_alpha=1e-3), z)))
    res['finals'] = [dict(text=t, answer=reasoner()._check_final_answer(t)) for t in FINALS]
    res['filters'] = [dict(text=t, kept=reasoner()._filter_words(t)) for t in FILTERS]
    for i, case in enumerate(QUERIES):
        c = query_case(tok, i, case); r = reasoner(c['question'], [c['previous']] if c['previous'] else [])
        r.searched_queries, seen = set(c['searched']), []
        r.retriever = types.SimpleNamespace(retrieve=lambda queries, **k: (seen.append(queries[0]), ([['d']], [['doc']]))[1])
        lps = [{0: Logprob(math.log(p), 1, t)} for t, p in zip(c['tokens'], c['probs'])] + [{2: Logprob(0.0, 1, '')}]
        step = U.Step(status=U.StepStatus.DIRECT_FAILED, content=c['text'], logprobs=lps)
        try: c['query'] = r._retrieve(step)[0]
        except ValueError as e: c['query'], c['error'] = None, str(e)
        res['queries'].append(c)
    for s in STEPS:
        r = reasoner('q', ['first step', s]); r.filter_last_step()
        res['last_steps'].append(dict(text=s, steps=[x.content for x in r.running_steps]))
    for sa, ss, ra, rs in CHOICES:
        r = reasoner(); r.final_step_answer, r.final_step_score, r.final_read_answer, r.final_read_answer_score = sa, ss, ra, rs
        r.compare_answer(); res['choices'].append(dict(step=[sa, ss], read=[ra, rs], answer=r.final_answer))
    res['solve'] = [solve_case(R, U, Logprob, q) for q in questions(24)]
    Path(out).write_text(json.dumps(res, indent=1, ensure_ascii=False) + '\n')
    print(f"{out}: {sum(len(v) for v in res.values() if isinstance(v, list))} cases")

if __name__ == '__main__':
    a = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    a.add_argument('--git', required=True, help="the fetched snapshot's git directory")
    a.add_argument('--out', default='data/release_parity/seakr_pure.json')
    args = a.parse_args(); run(args.git, args.out)
