"""`nbdev_test` (same arguments) with each notebook run under a stack frame named after it.

A test worker that dies of a fatal signal prints, through `faulthandler` (`PYTHONFAULTHANDLER=1` in tools/test.sh), the
Python stack of each of its threads; its main thread's stack then holds a line `File "notebook /…/NB.ipynb"`, which
tools/test.sh reports as the notebook whose worker died. `ETC_NB_NOTEBOOK` names the notebook a worker runs, so a counted
skip (`etc_nb.core.needs_benchmark`) says where it happened. After each notebook the worker frees what it can and prints
its resident memory, so a notebook that leaves gigabytes behind shows up in the log. A finished notebook's IPython shell
outlives it (IPython's own references), holding its variables: the names whose values hold a MiB of tensors or more
(models, engines, sessions) are dropped. Only those: resetting whole shells broke later notebooks of the same worker
(NameError: ALL_ATTENTION_FUNCTIONS, a transformers global, in five of them).
Notebooks start longest first (`notebook_seconds.tsv`, which `SAVE_TIMES=1 make test` rewrites), so no long one starts
last. The workers are forked (Linux), so they run this `test_nb`; it
is pickled by its place in `nbdev.test`, not in `__main__`, which a worker's IPython shell replaces after its first
notebook (a reused worker would then fail to find it).
"""
import builtins, ctypes, gc, inspect, itertools, os, sys, types, weakref
from pathlib import Path
import nbdev.test

_test_nb = nbdev.test.test_nb

def test_nb(fn, *args, **kwargs):
    "nbdev's `test_nb`, called from code compiled under the notebook's name (`ETC_NB_NOTEBOOK`: for counted skips)"
    os.environ['ETC_NB_NOTEBOOK'] = str(fn)
    try:
        ok, secs = eval(compile('_test_nb(fn, *args, **kwargs)', f'notebook {fn}', 'eval'),
                        dict(_test_nb=_test_nb, fn=fn, args=args, kwargs=kwargs))
        return (ok and not _left_registered(fn)), secs
    finally: _release(fn)

def _left_registered(fn)->list: # the methods a notebook registered and left in the worker's registry
    "Methods beyond the built-in ones still registered after a notebook: it fails, since the notebooks run after it in"
    " this worker would see them (a test removes what it registers: `etc_nb.config.forget_plugins`)"
    config = sys.modules.get('etc_nb.config')
    left = [m for m in getattr(config, 'METHODS', ()) if not config.registered_method(m).builtin]
    if left: print(f"{fn} left methods registered for the notebooks after it: {', '.join(left)}", flush=True)
    for m in left: config._REGISTRY.pop(m); config._PLUGINS.pop(m, None)     # (the next notebooks see the built-in ones)
    return left

def _rss_gb()->float:
    "This process's resident memory in GiB"
    return next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmRSS')) / 2**20

_shells = []   # every notebook's IPython shell, weakly: nbdev's `test_nb` makes one per notebook

class _RecordedShell(nbdev.test.CaptureShell):
    "nbdev's notebook shell, remembered so that `_release` can drop what a finished notebook's names hold"
    def __init__(self, *args, **kwargs): super().__init__(*args, **kwargs); _shells.append(weakref.ref(self))

def _tensor_bytes(value, depth:int=0, seen=None)->int:
    "Bytes of the tensors `value` holds: itself, or its attributes, dict values or items, a few levels deep"
    torch, seen = sys.modules['torch'], set() if seen is None else seen
    if id(value) in seen or depth > 3 or isinstance(value, (type, types.ModuleType)) or inspect.isroutine(value): return 0
    seen.add(id(value))
    if isinstance(value, torch.Tensor): return value.nbytes
    if isinstance(value, torch.nn.Module): return sum(t.nbytes for t in itertools.chain(value.parameters(), value.buffers()))
    inner = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else \
            vars(value).values() if hasattr(value, '__dict__') else ()
    return sum(_tensor_bytes(v, depth + 1, seen) for v in itertools.islice(inner, 1000))

def _drop_tensors()->int: # how many names were dropped
    "Drop the names in finished notebooks' namespaces whose values hold a MiB of tensors or more (models, sessions,"
    " loops, tensors); never a function, class or module, nor a value holding none (a registry, a constant)"
    if 'torch' not in sys.modules: return 0
    n = 0
    for shell in filter(None, (ref() for ref in _shells)):
        for name, value in list(shell.user_ns.items()):
            if _tensor_bytes(value) >= 2**20: del shell.user_ns[name]; n += 1
    return n

def _release(fn):
    "After a notebook: free what it left (the worker runs others next) and say what the worker still holds"
    before = _rss_gb(); dropped = _drop_tensors(); gc.collect()
    try: ctypes.CDLL('libc.so.6').malloc_trim(0)   # give freed heap pages back to the system
    except OSError: pass
    print(f"- worker memory after {os.path.basename(str(fn))}: {before:.1f} GB, {_rss_gb():.1f} GB after freeing "
          f"({dropped} names holding tensors dropped)", flush=True)

SECONDS = Path(__file__).with_name('notebook_seconds.tsv')   # each notebook's time in the last measured run

def longest_first(files, **kw)->list:
    "`files` by their last measured time, longest first (one not listed counts a minute): two workers finish together"
    if kw: return builtins.sorted(files, **kw)   # nbdev's other `sorted` call (its timing table)
    known = dict(l.split('\t') for l in SECONDS.read_text().splitlines() if l) if SECONDS.exists() else {}
    return builtins.sorted(files, key=lambda f: (-float(known.get(Path(f).name, 60)), str(f)))

if __name__ == '__main__':
    test_nb.__module__ = 'nbdev.test'; nbdev.test.test_nb = test_nb
    nbdev.test.CaptureShell = _RecordedShell
    nbdev.test.sorted = longest_first   # nbdev_test runs its files in `sorted` order: the longest start first
    nbdev.test.nbdev_test()
