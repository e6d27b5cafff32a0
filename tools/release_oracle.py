#!/usr/bin/env python
"""Whole questions through the released codes' `inference`, run as oracles: the release's side of `12b_release_parity`.

The released files are read from a fetched git snapshot (`git show COMMIT:PATH`) into a temporary folder and imported
from there in a process of their own; none of their code enters the project. Each oracle answers the same 2Wiki
questions as `etc_nb`'s loop (the bundled model, the project's demos and BM25 index), and `compare` writes the release's
side, one CSV row per question: the final text and its answer, every retrieval's query and the passages the stub answered
it with, and the chunk cases met (EOS, budget). `12b_release_parity` answers the same questions with the loop and compares
every part with that table; `ours` writes the loop's side in the oracle's format, and `compare --ours` prints the
questions where it differs.

  python tools/release_oracle.py release --code etc --git /work/.mirror/pkuserc+ETC/repo --n 20 --out /tmp/etc.jsonl
  python tools/release_oracle.py compare /tmp/etc.jsonl --out data/release_parity/etc_release.csv
  python tools/release_oracle.py ours --method etc_release --n 20 --out /tmp/ours_etc.jsonl   # optional
  python tools/release_oracle.py compare /tmp/etc.jsonl --ours /tmp/ours_etc.jsonl --out data/release_parity/etc_release.csv

Patches applied to the released code (each only to make it run here, its math untouched) are listed in `PATCHES`.
"""
import argparse, contextlib, io, json, os, subprocess, sys, tempfile, types
from argparse import Namespace
from pathlib import Path

COMMITS = dict(etc='facd465538d91a3c9017f002fe235aefb96389b8', dragin='4d71efcf6712bf82c4a5c7c81455af4efee20dcc')
FILES = dict(etc=['generate.py', 'data.py'], dragin=['src/generate.py', 'src/retriever.py', 'src/data.py'])
DATASET = '2wikimultihopqa'

# text patches: (code, file, old, new, why); each must match exactly once
PATCHES = [
    ('etc', 'generate.py', "        if not is_start and tokens[0] == self.tokenizer.bos_token:",
     "        if not is_start and tokens and tokens[0] == self.tokenizer.bos_token:",
     "an empty text block (the first round's answer so far) encodes to no token with a tokenizer that adds no BOS"),
    ('dragin', 'generate.py', "generated_tokens[0][i] == 13", "generated_tokens[0][i] == NEWLINE_ID",
     "the hard-coded LLaMA-2 newline id 13 is the tokenizer's newline id"),
    ('dragin', 'generate.py', "input_ids[0][i] == 13", "input_ids[0][i] == NEWLINE_ID",
     "the same in the QFS pass"),
    ('dragin', 'generate.py', "tokens[i-1] == '</s>'", "tokens[i-1] == EOS_TOKEN", "LLaMA-2's `</s>` is the EOS piece"),
    ('dragin', 'generate.py', "tokens[0] == '</s>'", "tokens[0] == EOS_TOKEN", "the same"),
    ('dragin', 'generate.py',
     '            tokenseq = "".join(tokens[r[0]: r[1]+1]).replace(self.space_token, "")\n            value',
     '            tokenseq = self.tokenizer.convert_tokens_to_string(tokens[r[0]: r[1]+1]).replace(" ", "")\n            value',
     "P8 of 04_triggers: a word's string is its text, the marker's space removed as the code removes the marker (byte-level pieces joined would read `Ċ`, `Ã¥`); the runs committed on 2026-11-28 had `.strip()` here, which also dropped a word's newline"),
    ('dragin', 'generate.py',
     '            tokenseq = "".join(tokens_tmp[r[0]: r[1]+1]).replace(self.generator.space_token, "")',
     '            tokenseq = self.generator.tokenizer.convert_tokens_to_string(tokens_tmp[r[0]: r[1]+1]).replace(" ", "")',
     "P8 in the QFS pass"),
]

def _inputs(n:int, start:int):
    "The questions, the dataset prompt and the BM25 index, as `etc_nb` builds them"
    from etc_nb.data import load_dataset, dataset_paragraphs
    from etc_nb.corpus import from_paragraphs
    from etc_nb.retrieval import BM25Index
    from etc_nb.prompts import get_prompt
    corpus = from_paragraphs(dataset_paragraphs(DATASET), words=100, name=f'{DATASET}-hipporag')
    return list(load_dataset(DATASET, n=n, start=start)), get_prompt(DATASET), corpus, BM25Index(corpus)

def _extract(code:str, git:str, dest:Path):
    for f in FILES[code]:
        src = subprocess.run(['git', '--git-dir', git, 'show', f'{COMMITS[code]}:{f}'], capture_output=True, text=True,
                             check=True).stdout
        for c, name, old, new, _ in PATCHES:
            if c == code and name == Path(f).name:
                if src.count(old) != 1: sys.exit(f"patch for {name} does not apply: {old!r}")
                src = src.replace(old, new)
        (dest/Path(f).name).write_text(src)

class _Loader:
    "Stands in for `from_pretrained`: the model and tokenizer already loaded"
    def __init__(self, obj): self.obj = obj
    def from_pretrained(self, *a, **k): return self.obj

def _searcher(index, log:list):
    "BM25 over the project's index as Elasticsearch would answer: a blank query finds nothing"
    def search(q:str, k:int):
        hits = index.search(q, k) if q.strip() else []
        log.append(dict(query=q, passages=[p.id for p, _ in hits]))
        return hits
    return search

def _record_calls(cls, name:str, log:list, unpack):
    orig = getattr(cls, name)
    def wrapped(self, *a, **k):
        out = orig(self, *a, **k); log.append(unpack(out, a, k)); return out
    setattr(cls, name, wrapped)

def run_release(code:str, git:str, n:int, start:int, out:str):
    "Answer the questions with the released code's `inference`; one JSON line per question"
    import spacy
    from etc_nb.core import load_nlp
    from etc_nb.lm import load_lm
    nlp = load_nlp(); spacy.load = lambda name, *a, **k: nlp          # the project's spaCy pipeline (same package)
    qs, prompt, corpus, index = _inputs(n, start)
    model, tok = load_lm(attn_implementation='eager')                  # `output_attentions` needs eager attention
    model.generation_config.do_sample = False                          # greedy, as the project decodes
    searches, calls = [], []
    search = _searcher(index, searches)
    tmp = Path(tempfile.mkdtemp(prefix=f'{code}-release-'))
    _extract(code, git, tmp); sys.path.insert(0, str(tmp))
    demo = [{'case': prompt.demo(e)} for e in prompt.exemplars[:prompt.fewshot]]
    if code == 'etc':
        class BM25:
            def __init__(self, *a, **k): pass
            def __call__(self, qry, topk=1): return [p.text for p, _ in search(qry, topk)]
        sys.modules['retriever'] = types.SimpleNamespace(BM25=BM25)
        import generate as G
        G.AutoTokenizer = _Loader(tok); G.AutoModelForCausalLM = _Loader(model)
        args = Namespace(model_name_or_path='smollm2-135m', generate_max_length=prompt.max_length,
                         retrieve_keep_top_k=25, retrieve_topk=3, hallucination_threshold=1.0, thres_abs=False,
                         use_counter=True, es_index_name='wiki')
        rag = G.ETC(args)
        rag.generator.space_token = 'Ġ'                                # the code picks Ġ only for "llama-3" paths
        rag.generator.tokens_cannot_merged |= {'Ġ'}
        _record_calls(G.Generator, 'generate', calls, lambda o, a, k: dict(
            kind='plain', n=0 if o.empty else len(o.blocks[-1].tokens) + o.ended, eos=bool(o.ended and not o.empty),
            empty=bool(o.empty), before=len(tok.encode(k['input_texts'][-1])),
            text=None if o.empty else o.new_text))
        _record_calls(G.Generator, 'simply_generate', calls, lambda o, a, k: dict(
            kind='context', n=len(tok.encode(o[1])) + o[0], eos=bool(o[0]), text=o[1]))
        answer = lambda t: t
        # main.py passes the dataset's question as it is, and its `"\nQuestion:"` block has no space after the colon
        # (a byte-level BPE reads `Question:Are`): the oracle gives it the project's leading space (12_loop)
        question = lambda q: ' ' + q.question.strip()
    else:
        sys.modules['faiss'] = types.ModuleType('faiss')
        for m in ('beir', 'beir.datasets', 'beir.datasets.data_loader', 'beir.retrieval', 'beir.retrieval.evaluation',
                  'beir.retrieval.search', 'beir.retrieval.search.lexical',
                  'beir.retrieval.search.lexical.elastic_search'):
            sys.modules[m] = mod = types.ModuleType(m)
            for a in ('GenericDataLoader', 'EvaluateRetrieval', 'BM25Search', 'ElasticSearch'): setattr(mod, a, type(a, (), {}))
        import retriever as R
        class ES:                                                      # EvaluateRetrieval over Elasticsearch
            def retrieve(self, corpus, queries, **k):
                # the code asks for 1000 hits and keeps the first 3 (`retrieve_topk`): the stub answers those 3
                return {qid: {p.id: (s, p.text) for p, s in zip(*_hits(search(q, 3)))} for qid, q in queries.items()}
        def _hits(h): return [p for p, _ in h], [s for _, s in h]
        bm = R.BM25.__new__(R.BM25); bm.tokenizer, bm.max_ret_topk, bm.retriever = tok, 1000, ES()
        sys.modules['retriever'] = R
        import generate as G
        G.NEWLINE_ID = tok.encode('\n')[-1]; G.EOS_TOKEN = tok.eos_token
        G.AutoTokenizer, G.AutoModelForCausalLM = _Loader(tok), _Loader(model)
        G.AutoConfig = _Loader(types.SimpleNamespace(model_type='llama'))
        args = Namespace(model_name_or_path='smollm2-135m', method='dragin', generate_max_length=prompt.max_length,
                         retrieve_keep_top_k=25, retrieve_topk=3, hallucination_threshold=3.0, query_formulation='real_words',
                         check_real_words=True, use_counter=True, retriever='BM25', es_index_name='wiki')
        G.BM25 = lambda *a, **k: bm
        rag = G.AttnWeightRAG(args)
        rag.generator.space_token = 'Ġ'                                # the code picks ▁ because the config says llama
        _record_calls(G.BasicGenerator, 'generate_attn', calls, lambda o, a, k: dict(
            kind='plain', n=_n(tok, a[0], o[0]), eos=tok.eos_token in o[0], text=o[0]))
        _record_calls(G.BasicGenerator, 'generate', calls, lambda o, a, k: dict(
            kind='context', n=_n(tok, a[0], o[0]), eos=tok.eos_token in o[0], text=o[0]))
        answer = lambda t: t
        # main.py passes the dataset's question as it is (`batch["question"]`); here it enters only the QFS pass's
        # text (`keep_real_words`), where a leading space changes the first token and so every attention row: with
        # ETC's leading space, 462bb642's second query kept `located` 25th and `Georgia` 26th, without it 27th and 25th
        question = lambda q: q.question
    with open(out, 'w') as f:
        for q in qs:
            searches.clear(); calls.clear()
            with contextlib.redirect_stdout(io.StringIO()):
                text = rag.inference(question(q), demo, prompt.case(q))
            f.write(json.dumps(dict(qid=q.id, text=text.strip(), retrievals=list(searches), calls=list(calls)))+'\n'); f.flush()
            print(q.id, len(searches), repr(text.strip()[:80]), file=sys.stderr)

def _n(tok, prompt:str, text:str)->int: return len(tok.encode(text, add_special_tokens=False)) if text else 0

@contextlib.contextmanager
def _patched(obj, name, value):
    old = getattr(obj, name); setattr(obj, name, value)
    try: yield
    finally: setattr(obj, name, old)

def run_ours(method:str, n:int, start:int, out:str):
    "Answer the questions with `etc_nb`'s loop; the same fields as `run_release`"
    from etc_nb.lm import load_lm
    from etc_nb.engine import Engine
    from etc_nb.loop import Loop
    qs, prompt, corpus, index = _inputs(n, start)
    model, tok = load_lm()
    loop = Loop(Engine(model, tok), prompt, {'bm25': index},
                corpus=dict(name=corpus.name, fingerprint=corpus.fingerprint, size=len(corpus)))
    with open(out, 'w') as f:
        for q in qs:
            tr = loop(q, method)
            calls = [dict(kind=c['kind'], n=len(c['tokens']['id']), eos=c['stop'] == 'eos', stop=c['stop'])
                     for c in tr['chunks']]
            f.write(json.dumps(dict(qid=q.id, text=tr['generated'].strip(), stop=tr['stop_reason'], calls=calls,
                                    retrievals=[dict(query=e['sent_query'], passages=e['passages'])
                                                for e in tr['retrievals']]))+'\n'); f.flush()
            print(q.id, len(tr['retrievals']), repr(tr['generated'].strip()[:80]), file=sys.stderr)

def compare(release:str, out:str, ours:str|None=None, budget:int=64):
    "Write the release's side, one CSV row per question; with `ours`, print each question's parts that differ from it"
    import pandas as pd
    from etc_nb.evaluation import extract_answer
    rows = []
    for r in map(json.loads, open(release)):
        rq, rp = [x['query'] for x in r['retrievals']], [x['passages'] for x in r['retrievals']]
        rows.append(dict(qid=r['qid'], retrievals_release=len(rq), answer_release=extract_answer(r['text'], DATASET),
                         eos_chunk=any(c['eos'] for c in r['calls']), budget_chunk=_budget_cut(r['calls'], budget),
                         blank_query=any(not q.strip() for q in rq), text_release=r['text'],
                         queries_release=json.dumps(rq), passages_release=json.dumps(rp)))   # the stub's top-k per query
    df = pd.DataFrame(rows)
    Path(out).parent.mkdir(parents=True, exist_ok=True); df.to_csv(out, index=False)
    print(df[['qid', 'retrievals_release', 'answer_release', 'eos_chunk', 'budget_chunk', 'blank_query']].to_string())
    if ours: _print_differences(df.set_index('qid'), ours)

def _print_differences(rel, ours:str):
    "Each question of a run of `ours` whose text, queries or passages differ from the release's"
    for o in map(json.loads, open(ours)):
        if o['qid'] not in rel.index: continue                     # the oracle has not answered it (yet)
        r = rel.loc[o['qid']]
        differ = [k for k, a, b in (('text', r.text_release, o['text']),
                                    ('queries', json.loads(r.queries_release), [x['query'] for x in o['retrievals']]),
                                    ('passages', json.loads(r.passages_release), [x['passages'] for x in o['retrievals']]))
                  if a != b]
        print(o['qid'], 'differs in ' + ', '.join(differ) if differ else 'equal')

def _budget_cut(calls:list, budget:int)->bool:
    "A chunk longer than the budget a per-question limit would have left it (the release gives each its full budget)"
    plain = [c for c in calls if c['kind'] == 'plain']
    if plain and 'before' not in plain[0]:                   # DRAGIN's records: a full-length chunk after some text
        return any(c['n'] >= budget for c in plain[1:])
    return any(c['before'] + c['n'] > budget and c['n'] < budget for c in plain)

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = p.add_subparsers(dest='cmd', required=True)
    a = sub.add_parser('release'); a.add_argument('--code', choices=COMMITS, required=True)
    a.add_argument('--git', required=True, help="the fetched snapshot's git directory")
    b = sub.add_parser('ours'); b.add_argument('--method', choices=('etc_release', 'dragin_official'), required=True)
    for s in (a, b):
        s.add_argument('--n', type=int, default=20); s.add_argument('--start', type=int, default=0)
        s.add_argument('--out', required=True)
    c = sub.add_parser('compare'); c.add_argument('release'); c.add_argument('--out', required=True)
    c.add_argument('--ours', help="a run of `ours` (JSON lines): print where it differs from the release")
    args = p.parse_args(argv)
    if args.cmd == 'release': run_release(args.code, args.git, args.n, args.start, args.out)
    elif args.cmd == 'ours': run_ours(args.method, args.n, args.start, args.out)
    else: compare(args.release, args.out, args.ours)

if __name__ == '__main__': main()
