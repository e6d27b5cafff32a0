"""`nbdev_test` (same arguments) with each notebook run under a stack frame named after it.

A test worker that dies of a fatal signal prints, through `faulthandler` (`PYTHONFAULTHANDLER=1` in tools/test.sh), the
Python stack of each of its threads; its main thread's stack then holds a line `File "notebook /…/NB.ipynb"`, which
tools/test.sh reports as the notebook whose worker died. The workers are forked (Linux), so they run this `test_nb`; it
is pickled by its place in `nbdev.test`, not in `__main__`, which a worker's IPython shell replaces after its first
notebook (a reused worker would then fail to find it).
"""
import nbdev.test

_test_nb = nbdev.test.test_nb

def test_nb(fn, *args, **kwargs):
    "nbdev's `test_nb`, called from code compiled under the notebook's name"
    return eval(compile('_test_nb(fn, *args, **kwargs)', f'notebook {fn}', 'eval'),
                dict(_test_nb=_test_nb, fn=fn, args=args, kwargs=kwargs))

if __name__ == '__main__':
    test_nb.__module__ = 'nbdev.test'; nbdev.test.test_nb = test_nb
    nbdev.test.nbdev_test()
