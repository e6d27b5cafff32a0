"""`nbdev_test` (same arguments) with each notebook run under a stack frame named after it.

A test worker that dies of a fatal signal prints, through `faulthandler` (`PYTHONFAULTHANDLER=1` in tools/test.sh), the
Python stack of each of its threads; its main thread's stack then holds a line `File "notebook /…/NB.ipynb"`, which
tools/test.sh reports as the notebook whose worker died. `ETC_NB_NOTEBOOK` names the notebook a worker runs, so a counted
skip (`etc_nb.core.needs_benchmark`) says where it happened. After each notebook the worker frees what it can and prints
its resident memory, so a notebook that leaves gigabytes behind shows up in the log. Notebooks start longest first
(`notebook_seconds.tsv`, which `SAVE_TIMES=1 make test` rewrites), so no long one starts last. The workers are forked
(Linux), so they run this `test_nb`; it
is pickled by its place in `nbdev.test`, not in `__main__`, which a worker's IPython shell replaces after its first
notebook (a reused worker would then fail to find it).
"""
import builtins, ctypes, gc, os
from pathlib import Path
import nbdev.test

_test_nb = nbdev.test.test_nb

def test_nb(fn, *args, **kwargs):
    "nbdev's `test_nb`, called from code compiled under the notebook's name (`ETC_NB_NOTEBOOK`: for counted skips)"
    os.environ['ETC_NB_NOTEBOOK'] = str(fn)
    try: return eval(compile('_test_nb(fn, *args, **kwargs)', f'notebook {fn}', 'eval'),
                     dict(_test_nb=_test_nb, fn=fn, args=args, kwargs=kwargs))
    finally: _release(fn)

def _rss_gb()->float:
    "This process's resident memory in GiB"
    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS')) / 2**20

def _release(fn):
    "After a notebook: free what it left (the worker runs others next) and say what the worker still holds"
    before = _rss_gb(); gc.collect()
    try: ctypes.CDLL('libc.so.6').malloc_trim(0)   # give freed heap pages back to the system
    except OSError: pass
    print(f"- worker memory after {os.path.basename(str(fn))}: {before:.1f} GB, {_rss_gb():.1f} GB after freeing", flush=True)

SECONDS = Path(__file__).with_name('notebook_seconds.tsv')   # each notebook's time in the last measured run

def longest_first(files, **kw)->list:
    "`files` by their last measured time, longest first (one not listed counts a minute): two workers finish together"
    if kw: return builtins.sorted(files, **kw)   # nbdev's other `sorted` call (its timing table)
    known = dict(l.split('\t') for l in SECONDS.read_text().splitlines() if l) if SECONDS.exists() else {}
    return builtins.sorted(files, key=lambda f: (-float(known.get(Path(f).name, 60)), str(f)))

if __name__ == '__main__':
    test_nb.__module__ = 'nbdev.test'; nbdev.test.test_nb = test_nb
    nbdev.test.sorted = longest_first   # nbdev_test runs its files in `sorted` order: the longest start first
    nbdev.test.nbdev_test()
