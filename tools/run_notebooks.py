"""Execute notebooks top to bottom, in place, through a real Jupyter kernel, then `nbdev_clean` them (`make notebooks`).

    python tools/run_notebooks.py [NB_OR_FOLDER ...] [--flags "slow"] [--figures] [--kernel etc_nb] [--timeout 3600]

Which notebooks and cells run is what `nbdev_test` runs: every notebook under `nbs/` (default; names starting with `_`
or `.`, folders holding a `.notest` file, frontmatter `skip_exec: true` and non-Python notebooks are skipped); in each,
every code cell except those flagged with settings.ini's `tst_flags` (`notest slow gpu`, unless forced with `--flags`),
`#| eval: false` cells and the `nbdev_export()` cell. Skipped cells keep their stored outputs. Like `nbdev_test`, the
working directory is the notebook's folder and `IN_TEST=1`, so experiment notebooks take their CI-sized path;
`--figures` leaves IN_TEST unset, as a user's kernel does, so that they also write their figures (`make figures`).

Unlike `nbdev_test` (execnb, in-process), each notebook runs in a fresh kernel of the installed kernelspec `--kernel`
(default `etc_nb`, installed by tools/install.sh), the way a user's JupyterLab runs it, and the outputs are written back.

Repeatable outputs: a second run on an unchanged tree changes no output except the wall-clock timings that notebooks
print themselves (`wall_s`, seconds per question, timing tables, load times). To get there:
- the kernel gets `PYTHONPATH=<repo>` (this checkout's `etc_nb`, as nbdev_test puts the repo on `sys.path`),
  `PYTHONHASHSEED=0` (set iteration order is otherwise random per process), `TQDM_DISABLE=1` and
  `HF_HUB_DISABLE_PROGRESS_BARS=1` (progress bars carry rates and times; transformers passes `disable=` itself, so
  only the second silences its bars);
- stream outputs are merged per stream (where ipykernel splits them depends on timing);
- progress bars that still show (code that passes `disable=False`) are ipywidgets views with a random model id: the
  view is dropped and its text stays (the widget's state is not saved, so a stored view could not display anyway);
- warnings raised from a cell name the kernel's per-process file `/tmp/ipykernel_<pid>/<hash>.py`: the pid is
  replaced by `<pid>`.

Prints each notebook's time and a total; on an error it names the notebook, the cell (index and first line) and the
traceback, writes that notebook with the error output in place (open it to see where), goes on with the other notebooks
and exits 1.
"""
import argparse, os, re, sys, time
from pathlib import Path
import nbformat
from fastcore.basics import str2bool
from jupyter_client.kernelspec import NoSuchKernel
from nbclient import NotebookClient
from nbdev.clean import nbdev_clean
from nbdev.config import get_config
from nbdev.doclinks import nbglob
from nbdev.frontmatter import FrontmatterProc
from nbdev.process import NBProcessor, extract_directives, nb_lang
from nbdev.test import _keep_file

def notebooks(paths:list)->list:
    "The notebooks nbdev_test would test among `paths` (files or folders; default the project's nbs/), sorted"
    found = []
    for p in map(Path, paths or [get_config().nbs_path]):
        if not p.exists(): raise SystemExit(f"run_notebooks: no such notebook or folder: {p}")
        found += [p] if p.is_file() else nbglob(p, as_path=True)
    return sorted({f.resolve() for f in found if _keep_file(f, '.notest')})

def runs_at_all(fn:Path)->bool:
    "False for notebooks nbdev_test skips whole: frontmatter `skip_exec: true`, or not Python"
    nb = NBProcessor(fn, procs=FrontmatterProc, process=True).nb
    return not str2bool(getattr(nb, 'frontmatter_', {}).get('skip_exec', False)) and nb_lang(nb) == 'python'

def skipped(cell, flags:set)->bool:
    "Whether nbdev_test skips this cell: not code, the nbdev_export() cell, `#| eval: false`, or a flag in `flags`"
    if cell.cell_type != 'code': return True
    if 'nbdev_export' + '(' in cell.source: return True
    d = extract_directives(nbformat.NotebookNode(source=cell.source), remove=False)
    return d.get('eval:', [''])[0].lower() == 'false' or bool(flags & d.keys())

def kernel_env(root:Path, in_test:bool=True)->dict:
    "The kernel's environment: this one, plus the checkout on PYTHONPATH and the settings that make outputs repeatable"
    env = {**os.environ, 'IN_TEST': '1', 'PYTHONHASHSEED': '0', 'TQDM_DISABLE': '1', 'HF_HUB_DISABLE_PROGRESS_BARS': '1'}
    if not in_test: del env['IN_TEST']
    env['PYTHONPATH'] = os.pathsep.join([str(root), *filter(None, [os.environ.get('PYTHONPATH')])])
    return env

WIDGET_VIEW = 'application/vnd.jupyter.widget-view+json'

def repeatable(outputs:list)->list:
    "`outputs` without widget views (text fallback kept) and with the kernel's pid masked in cell file paths"
    res = []
    for o in outputs:
        if o.get('output_type') == 'stream': o['text'] = re.sub(r'ipykernel_\d+(?=[\\/])', 'ipykernel_<pid>', o['text'])
        if WIDGET_VIEW in o.get('data', {}):
            del o['data'][WIDGET_VIEW]
            if not o['data']: continue
        res.append(o)
    return res

def _first_line(src:str)->str: return next((l for l in src.splitlines() if l.strip() and not l.lstrip().startswith('#|')), '')[:70]

def run_notebook(fn:Path, flags:set, kernel:str='etc_nb', timeout:int=3600, in_test:bool=True)->str|None:
    "Execute `fn` in place through `kernel` (cells nbdev_test skips keep their outputs); the error message or None"
    nb = nbformat.read(fn, as_version=4)
    client = NotebookClient(nb, kernel_name=kernel, timeout=timeout, startup_timeout=120, record_timing=False, store_widget_state=False,
                            resources={'metadata': {'path': str(fn.parent)}},
                            coalesce_streams=True,  # one stream output per name: where ipykernel splits them depends on timing
                            extra_arguments=['--IPKernelApp.log_level=ERROR'])  # not its plain-TCP warning, once per notebook
    err = None
    with client.setup_kernel(env=kernel_env(get_config().config_path, in_test)):
        for i, cell in enumerate(nb.cells):
            if skipped(cell, flags): continue
            try: client.execute_cell(cell, i)
            except Exception as e: err = f"{fn.name}: cell {i} ({_first_line(cell.source)!r}) failed:\n{e}"
            cell.outputs = repeatable(cell.outputs)
            if err: break
    nbformat.write(nb, fn)
    nbdev_clean.__wrapped__(fname=str(fn))   # the undecorated function: call_parse would parse this script's argv
    return err

def main(argv=None)->int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('paths', nargs='*', help="notebooks or folders (default: the project's nbs/)")
    ap.add_argument('--flags', default='', help="space-separated tst_flags to run anyway, e.g. 'slow' (as nbdev_test --flags)")
    ap.add_argument('--kernel', default='etc_nb', help="kernelspec to run (default etc_nb, installed by tools/install.sh)")
    ap.add_argument('--timeout', type=int, default=3600, help="seconds per cell")
    ap.add_argument('--figures', action='store_true', help="run as a user does, without IN_TEST: experiment notebooks then write "
                    "their figures to figures/ (and, with --flags slow, their judgements)")
    a = ap.parse_args(argv)
    flags = set(get_config().tst_flags.split()) - set(a.flags.split())
    try: NotebookClient(nbformat.v4.new_notebook(), kernel_name=a.kernel).create_kernel_manager().kernel_spec
    except NoSuchKernel: print(f"run_notebooks: no Jupyter kernel named {a.kernel!r}: run `make install` (tools/install.sh installs "
                               "it) or pass --kernel", file=sys.stderr); return 2
    fns, times, errors, t0 = notebooks(a.paths), {}, [], time.time()
    for fn in fns:
        if not runs_at_all(fn): print(f"{fn.name}: skipped (skip_exec or not Python)", flush=True); continue
        t = time.time(); err = run_notebook(fn, flags, a.kernel, a.timeout, not a.figures); times[fn.name] = time.time() - t
        print(f"{fn.name}: {'FAILED' if err else 'ok'} in {times[fn.name]:.1f}s", flush=True)
        if err: errors.append(err); print(err, file=sys.stderr, flush=True)
    print(f"{len(times)} notebooks run, {len(errors)} failed, in {time.time() - t0:.1f}s "
          f"(slowest: {', '.join(f'{k} {v:.0f}s' for k, v in sorted(times.items(), key=lambda kv: -kv[1])[:3])})")
    if errors: print("failed:\n" + '\n'.join('  ' + e.split('\n')[0] for e in errors), file=sys.stderr)
    return 1 if errors else 0

if __name__ == '__main__': sys.exit(main())
