"""Retrieval benchmark (issue 5): etc_nb's sparse BM25 vs the rank_bm25 reference (and bm25s for scale), with scaling.

    python benchmarks/retrieval.py                       # 10k / 100k / 300k / 1M passages, 3-6 min on 2 shared cores
    python benchmarks/retrieval.py --sizes 10000 100000  # quicker
    python benchmarks/retrieval.py --quick               # seconds: 300 and 1,000 passages, 50 questions (CI; measures nothing)

Corpus: the offline Wikipedia paragraphs (2Wiki HippoRAG corpus, HotpotQA train100 corpus, SQuAD 2.0 dev+test
paragraphs), split DPR-style into 100-word passages, then TOPPED UP WITH SYNTHETIC PASSAGES: 100-word word sequences
sampled from a bigram model of those same paragraphs (a word follows its predecessor with the frequency it does in the
real text; 10% of the time, or after a paragraph end, a fresh word is drawn by unigram frequency), with 1-4 word titles
sampled the same way from the real titles. The vocabulary and its Zipf shape are therefore real; the synthetic text is
not. Questions: the 1,000 HippoRAG 2WikiMultihopQA dev questions.

Measured, per size: index build time (analysis + postings), peak RSS growth during the build, index size in memory and
on disk, save and memory-mapped load time, throughput of search_many over all questions, and single-query latency
(median over the first --single questions). At --ref-size (100k): rank_bm25 (the reference backend) on every 10th
question (--ref-queries; it scores every passage in Python), its per-query median, the speedup, and the top-3
agreement under identical analysis; at --agree-size (10k real passages) the agreement on all 1,000 questions; bm25s
on one joint title+text field with the same analysis, for scale (it cannot do best_fields).

Extrapolation to DPR's 21,015,324 passages: a log-log line through the points of >= 100k passages (>= 89% synthetic
100-word passages, like DPR's; the 10k point is all real and its passages are shorter, ~37 vs ~69 postings each).
The synthetic vocabulary is closed (~39k terms), so every term's posting list grows linearly with the corpus: for
latency that is an upper bound (Wikipedia's rare words stay rare), for the common question words it is about right.
The last line printed is one JSON object. `--quick` runs every step on two tiny corpora built from the 2WikiMultihopQA
paragraphs alone (the project's bundled sample will do, so it runs on a fresh checkout) and 50 questions: it measures
nothing, it only shows that the code still runs.
"""
import argparse, gc, json, os, statistics, sys, tempfile, threading, time
from itertools import chain
from pathlib import Path
import numpy as np, psutil
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from etc_nb.core import find_data
from etc_nb.corpus import Corpus, from_paragraphs, read_paragraphs_json
from etc_nb.retrieval import BM25Index

DPR_PASSAGES = 21_015_324

def real_paragraphs(quick=False):
    "(title, text) of every offline Wikipedia paragraph (quick: the 2Wiki corpus alone)"
    wiki = read_paragraphs_json(find_data('2wikimultihopqa/hipporag_2wikimultihopqa_corpus.json'))
    if quick: return wiki
    hotpot = json.loads(find_data('hotpotqa/hipporag_hotpotqa_train100_corpus.json').read_text())
    squad = [(a['title'], p['context']) for f in ('cs224n_dev-v2.0.json', 'cs224n_test-v2.0_noanswers.json')
             for a in json.loads(find_data(f'squad2/{f}').read_text())['data'] for p in a['paragraphs']]
    return wiki + [(t, ''.join(s)) for t, s in hotpot.items()] + squad

class Bigram:
    "Samples word sequences from a bigram model of some texts (unigram restarts at text ends and with prob. `restart`)"
    def __init__(self, texts, restart=0.1, seed=0):
        words = list(chain.from_iterable(t.split() + ['\n'] for t in texts))
        self.vocab, ids = np.unique(np.array(words, dtype=object), return_inverse=True)
        self.vocab = self.vocab.tolist(); self.end = self.vocab.index('\n')
        order = np.argsort(ids[:-1], kind='stable')
        self.succ, self.start = ids[1:][order], np.searchsorted(ids[:-1][order], np.arange(len(self.vocab) + 1))
        self.unigram = ids[ids != self.end]; self.restart, self.rng = restart, np.random.default_rng(seed)
    def sample(self, n, length):
        rng, cur, out = self.rng, self.rng.choice(self.unigram, n), np.empty((n, length), np.int64)
        for j in range(length):
            out[:, j] = cur
            cnt = self.start[cur + 1] - self.start[cur]
            nxt = self.succ[np.minimum(self.start[cur] + (rng.random(n) * cnt).astype(np.int64), len(self.succ) - 1)]
            fresh = (cnt == 0) | (rng.random(n) < self.restart) | (nxt == self.end)
            cur = np.where(fresh, rng.choice(self.unigram, n), nxt)
        return out
    def texts(self, n, length, lengths=None):
        v, rows = self.vocab, self.sample(n, length).tolist()
        if lengths is not None: rows = [r[:l] for r, l in zip(rows, lengths)]
        return [' '.join(map(v.__getitem__, r)) for r in rows]

def make_corpus(real:Corpus, text_model:Bigram, title_model:Bigram, n:int)->Corpus:
    "The first `n` real passages, topped up with synthetic ones"
    if n <= len(real): return Corpus(list(real.ids[:n]), list(real.titles[:n]), list(real.texts[:n]), f'real[:{n}]')
    ids, titles, texts = list(real.ids), list(real.titles), list(real.texts)
    for s in range(0, n - len(real), 100_000):
        m = min(100_000, n - len(real) - s)
        texts += text_model.texts(m, 100)
        titles += title_model.texts(m, 4, title_model.rng.integers(1, 5, m))
        ids += [f'synthetic#{len(ids) + i}' for i in range(m)]
    return Corpus(ids, titles, texts, f'{len(real)} real + {n - len(real)} synthetic')

class PeakRSS:
    "Peak resident memory growth of this process while the block runs (sampled every 20 ms)"
    def __enter__(self):
        self.p = psutil.Process(); self.base = self.peak = self.p.memory_info().rss; self.run = True
        self.t = threading.Thread(target=self._poll, daemon=True); self.t.start(); return self
    def _poll(self):
        while self.run: self.peak = max(self.peak, self.p.memory_info().rss); time.sleep(0.02)
    def __exit__(self, *exc): self.run = False; self.t.join(); self.mb = (self.peak - self.base) / 2**20

def timed(f, *a, **kw):
    t = time.perf_counter(); r = f(*a, **kw); return r, time.perf_counter() - t

def ids(hits): return [p.id for p, _ in hits]

def latency(index, questions):
    "Median single-query latency (s) over `questions`"
    return statistics.median(timed(index.search, q)[1] for q in questions)

def measure(corpus:Corpus, questions:list[str], single:int)->tuple[BM25Index, dict]:
    "Build, size, save/load and query timings of the sparse backend on `corpus`"
    with PeakRSS() as mem: index, build = timed(BM25Index, corpus)
    nbytes = sum(a.nbytes for p in index.fields for a in p)
    res, t_batch = timed(index.search_many, questions)
    lat = latency(index, questions[:single])
    with tempfile.TemporaryDirectory(dir=os.environ.get('BENCH_TMP')) as d:
        _, t_save = timed(index.save, Path(d)/'bm25')
        disk = sum(f.stat().st_size for f in (Path(d)/'bm25').iterdir() if f.is_file())
        loaded, t_load = timed(BM25Index.load, Path(d)/'bm25', corpus=corpus)
        assert [ids(h) for h in loaded.search_many(questions[:50])] == [ids(h) for h in res[:50]], 'reload changed results'
        del loaded
    n_post = sum(len(p.indices) for p in index.fields)
    return index, dict(passages=len(corpus), build_s=round(build, 2), peak_build_rss_mb=round(mem.mb), index_mb=round(nbytes / 2**20, 1),
                       disk_index_mb=round(disk / 2**20, 1), postings=int(n_post), terms=len(index.vocab), save_s=round(t_save, 2),
                       load_s=round(t_load, 3), qps_search_many=round(len(questions) / t_batch, 1), latency_ms_median=round(lat * 1e3, 3),
                       no_hit_queries=sum(not h for h in res))

def reference(corpus, index, questions):
    "rank_bm25 on the same corpus: build time, per-query median, agreement with the sparse backend"
    with PeakRSS() as mem: ref, build = timed(BM25Index, corpus, backend='rank_bm25')
    times, agree, agree_ties = [], 0, 0
    for q in questions:
        r, t = timed(ref.search, q); times.append(t); s = index.search(q)
        agree += ids(r) == ids(s)
        # up to ties: the same scores rank by rank (float32 vs float64 may order passages 1e-7 apart differently)
        agree_ties += ids(r) == ids(s) or (len(r) == len(s) and np.allclose([x for _, x in r], [x for _, x in s], rtol=1e-5))
    return dict(rank_bm25_build_s=round(build, 2), rank_bm25_peak_build_rss_mb=round(mem.mb),
                rank_bm25_latency_ms_median=round(statistics.median(times) * 1e3, 2),
                top3_agreement=round(agree / len(questions), 4), top3_agreement_up_to_ties=round(agree_ties / len(questions), 4))

def bm25s_joint(corpus, index, questions):
    "bm25s (Lucene idf) on one field title+text with the same analysis: build and query speed, for scale"
    import bm25s
    ana = index.analyzer
    toks, t_tok = timed(lambda: [ana(f'{p.title} {p.text}') for p in corpus])
    r = bm25s.BM25(k1=1.2, b=0.75, method='lucene')
    _, t_idx = timed(r.index, toks, show_progress=False)
    qt = [t for t in (ana(q) for q in questions) if t]   # bm25s scores a termless query against its empty token
    _, t_q = timed(r.retrieve, qt, k=3, show_progress=False, n_threads=1)
    lat = statistics.median(timed(r.retrieve, [t], k=3, show_progress=False)[1] for t in qt[:200])
    return dict(bm25s_joint_build_s=round(t_tok + t_idx, 2), bm25s_joint_qps_search_many=round(len(qt) / t_q, 1),
                bm25s_joint_latency_ms_median=round(lat * 1e3, 3))

def extrapolate(points:list[dict], keys:list[str], n=DPR_PASSAGES)->dict:
    "log-log linear fit of each key against passages, evaluated at `n` (exponent reported too)"
    x = np.log([p['passages'] for p in points]); out = {}
    for k in keys:
        slope, icpt = np.polyfit(x, np.log([max(p[k], 1e-9) for p in points]), 1)
        out[k] = round(float(np.exp(icpt + slope * np.log(n))), 2); out[k + '_exponent'] = round(float(slope), 2)
    return out

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sizes', type=int, nargs='+', default=[10_000, 100_000, 300_000, 1_000_000])
    ap.add_argument('--ref-size', type=int, default=100_000, help='corpus size for the rank_bm25 and bm25s comparisons')
    ap.add_argument('--ref-queries', type=int, default=100, help='questions timed with rank_bm25 (every 10th of the 1000)')
    ap.add_argument('--agree-size', type=int, default=10_000, help='corpus size on which all questions are checked against rank_bm25')
    ap.add_argument('--single', type=int, default=300, help='questions timed one at a time for the latency median')
    ap.add_argument('--quick', action='store_true', help='seconds on tiny sizes, 2Wiki paragraphs only (CI: the code still runs); measures nothing')
    a = ap.parse_args()
    if a.quick: a.sizes, a.ref_size, a.ref_queries, a.agree_size, a.single = [300, 1000], 1000, 10, 300, 20
    t0 = time.perf_counter()
    real = from_paragraphs(real_paragraphs(a.quick), name='offline-wikipedia')
    qa = json.loads(find_data('2wikimultihopqa/hipporag_2wikimultihopqa_dev1000_questions.json').read_text())
    questions = [q['question'] for q in qa][:50 if a.quick else None]
    text_model, title_model = Bigram(real.texts), Bigram(sorted(set(real.titles)), seed=1)
    points, cmp, agree_all = [], {}, {}
    for n in sorted(a.sizes):
        corpus, t_gen = timed(make_corpus, real, text_model, title_model, n)
        print(f'\n== {corpus.name} (generated in {t_gen:.1f} s)', flush=True)
        index, m = measure(corpus, questions, a.single); points.append(m); print(json.dumps(m), flush=True)
        if n == a.agree_size:          # every question against rank_bm25 on a small, all-real corpus
            full = reference(corpus, index, questions)
            agree_all = dict(agree_all_passages=n, agree_all_questions=len(questions), top3_agreement_all=full['top3_agreement'],
                             top3_agreement_all_up_to_ties=full['top3_agreement_up_to_ties']); print(json.dumps(agree_all), flush=True)
        if n == a.ref_size:
            sub = questions[::max(1, len(questions) // a.ref_queries)][:a.ref_queries]
            cmp = reference(corpus, index, sub) | bm25s_joint(corpus, index, questions); print(json.dumps(cmp), flush=True)
            cmp |= dict(ref_passages=n, ref_queries=len(sub), sparse_latency_ms_median=m['latency_ms_median'],
                        sparse_qps_search_many=m['qps_search_many'])
        del index, corpus; gc.collect()
    out = dict(benchmark='retrieval', corpus=f'{len(real)} real offline Wikipedia passages ({"2Wiki" if a.quick else "2Wiki+HotpotQA+SQuAD"}, DPR 100-word split) '
               'topped up with bigram-sampled synthetic passages', questions=len(questions), scaling=points, **agree_all)
    if cmp:
        out |= cmp
        out['speedup_vs_rank_bm25'] = round(cmp['rank_bm25_latency_ms_median'] / cmp['sparse_latency_ms_median'], 1)
        out['speedup_vs_rank_bm25_search_many'] = round(cmp['rank_bm25_latency_ms_median'] / (1e3 / cmp['sparse_qps_search_many']), 1)
        out['goals'] = dict(speedup_ge_100=out['speedup_vs_rank_bm25'] >= 100, top3_agreement_ge_0_99=cmp['top3_agreement'] >= 0.99)
    fit = [p for p in points if p['passages'] >= 100_000]
    fit = fit if len(fit) >= 2 else points
    if len(fit) >= 2:
        out['extrapolated_21M'] = dict(passages=DPR_PASSAGES, fitted_on=[p['passages'] for p in fit],
                                       **extrapolate(fit, ['build_s', 'peak_build_rss_mb', 'index_mb', 'disk_index_mb',
                                                           'latency_ms_median', 'postings', 'qps_search_many']))
    out['wall_s'] = round(time.perf_counter() - t0, 1)
    if a.quick: out['quick'] = True
    print(json.dumps(out))

if __name__ == '__main__': main()
