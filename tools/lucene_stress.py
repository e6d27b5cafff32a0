"""Stress the Lucene path the test suite crashed on (issue 50), counting the runs that die.

    python tools/lucene_stress.py --runs 50                    # 50 fresh processes, both cores kept busy meanwhile
    python tools/lucene_stress.py --runs 3 --clobber ray       # with a real ray.init()/ray.shutdown() first (slow)
    python tools/lucene_stress.py --runs 5 --mode run          # etc_nb's own batched run(..., retriever='lucene')

Each run is a fresh Python process that starts Lucene (`etc_nb.lucene`), optionally does to the process's signal
handlers what another native library did in the crashed test worker (`--clobber`), then searches Lucene the way a
batched run does: a new search thread per run (`13_batch`'s scheduler), greenlet workers doing torch work in the main
thread meanwhile, and a thread forcing JVM garbage collections, i.e. safepoints, which compiled Java code reaches through
a deliberate fault (the accelerant: without it the same crash waits for the JVM's own safepoints).

`--clobber ray` starts and stops a local Ray cluster in the process after Lucene started (`etc_nb.scale.ray_cluster`:
`ray.init()`, `ray.shutdown()`), as a test worker that ran `16_scale` (`run(..., workers=2)`) after a notebook that used
Lucene did; `--clobber dfl` leaves what those two leave (SIGSEGV at its default action), in a millisecond instead of
half a minute or more; `--clobber none` leaves the handlers alone.
`--busy N` keeps N busy-loop processes running beside the runs (default: one per core). The summary line counts runs
that died of a signal, runs that failed otherwise, and clean runs; the exit status is 1 unless every run was clean.
Run it against another checkout's code with PYTHONPATH (say, the code before a fix).
"""
import argparse, os, signal, subprocess, sys, tempfile, time
from pathlib import Path

def child(args):
    "One run, in this process"
    import random, threading
    from concurrent.futures import ThreadPoolExecutor
    import greenlet, torch
    from etc_nb.corpus import from_paragraphs, write_dpr_tsv
    from etc_nb.data import dataset_paragraphs
    from etc_nb.lucene import lucene, lucene_retriever
    paragraphs = list(dataset_paragraphs('2wikimultihopqa'))[:args.paragraphs]
    corpus = from_paragraphs(paragraphs, words=100, name=f'stress-{len(paragraphs)}')
    index = lucene_retriever(corpus).inner                   # real Lucene, no retrieval cache in front
    if args.clobber == 'ray':
        from etc_nb.scale import ray_cluster
        with ray_cluster(num_cpus=1): pass                   # what run(..., workers=N) starts and stops
    elif args.clobber == 'dfl': signal.signal(signal.SIGSEGV, signal.SIG_DFL)
    words, rng, done = ' '.join(corpus.texts).split(), random.Random(args.seed), threading.Event()
    System = lucene()['System']
    def collect():
        while not done.is_set(): System.gc(); time.sleep(0.005)
    gc = threading.Thread(target=collect, daemon=True); gc.start()
    try:
        if args.mode == 'run':
            from etc_nb.runner import run
            tsv = write_dpr_tsv(corpus, Path(args.tmp)/'psgs.tsv')
            run('2wikimultihopqa', 'etc,dragin', args.questions, out=Path(args.tmp)/'run', progress=False,
                corpus=tsv, retriever='lucene', batch_size=8)
            return
        x = torch.randn(128, 128)
        def worker():
            while True: x @ x; greenlet.getcurrent().parent.switch()
        workers = [greenlet.greenlet(worker) for _ in range(8)]
        for _ in range(args.rounds):                         # one batched run each: its own search thread
            with ThreadPoolExecutor(1, thread_name_prefix='etc_nb-search') as search:
                for _ in range(args.steps):
                    found = search.submit(index.search_many, [' '.join(rng.choices(words, k=8)) for _ in range(8)])
                    for w in workers: w.switch()             # the step's forward passes, beside the searches
                    found.result()
    finally: done.set(); gc.join()

def main(args):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))                 # (the busy loops go with it)
    busy = [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range(args.busy)]
    counts, t0 = dict(crashed=0, failed=0, ok=0), time.time()
    env = {**os.environ, 'ETC_NB_CACHE': tempfile.mkdtemp(prefix='lucene_stress_')}   # the index, built once
    try:
        for i in range(args.runs):
            with tempfile.TemporaryDirectory() as tmp:
                t = time.time()
                p = subprocess.run([sys.executable, __file__, '--child', '--tmp', tmp, '--seed', str(i),
                                    *(f'--{k}={v}' for k, v in vars(args).items()
                                      if k in ('clobber', 'mode', 'rounds', 'steps', 'questions', 'paragraphs'))],
                                   env=env, cwd=tmp, capture_output=True, text=True)
                java_reports = [f for f in os.listdir(tmp) if f.startswith('hs_err')]
            kind = 'crashed' if p.returncode < 0 else 'failed' if p.returncode else 'ok'
            counts[kind] += 1
            what = signal.Signals(-p.returncode).name if p.returncode < 0 else p.returncode
            print(f"run {i + 1}: {kind} ({what}) in {time.time() - t:.1f} s"
                  + (f", Java error files {java_reports}" if java_reports else ''), flush=True)
            if kind != 'ok' and p.stderr.strip(): print('   ' + '\n   '.join(p.stderr.strip().splitlines()[-12:]))
    finally:
        for b in busy: b.kill()
    print(f"{args.runs} runs (--clobber {args.clobber}, --mode {args.mode}, --rounds {args.rounds}, --steps {args.steps}, "
          f"--paragraphs {args.paragraphs}, {args.busy} busy loops) in "
          f"{time.time() - t0:.0f} s: {counts['crashed']} crashed, {counts['failed']} failed, {counts['ok']} ok")
    return 0 if counts['ok'] == args.runs else 1

if __name__ == '__main__':
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--runs', type=int, default=50, help='fresh processes, one after another')
    p.add_argument('--clobber', choices=('none', 'dfl', 'ray'), default='dfl', help='what happens to the signal handlers')
    p.add_argument('--mode', choices=('search', 'run'), default='search',
                   help="search: the scheduler's pattern, searches only; run: etc_nb's run(..., retriever='lucene')")
    p.add_argument('--rounds', type=int, default=2, help='search mode: batched runs per process')
    p.add_argument('--steps', type=int, default=6, help='search mode: steps with searches per batched run')
    p.add_argument('--paragraphs', type=int, default=2000, help="the first paragraphs of 2WikiMultihopQA's corpus")
    p.add_argument('--questions', type=int, default=4, help='run mode: questions per method')
    p.add_argument('--busy', type=int, default=os.cpu_count(), help='busy-loop processes beside the runs')
    p.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    p.add_argument('--tmp', help=argparse.SUPPRESS); p.add_argument('--seed', type=int, default=0, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child: child(a)
    else: sys.exit(main(a))
