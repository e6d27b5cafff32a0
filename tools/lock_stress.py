"""Run the lock tests N times in a row while busy loops load every core (issue 37: `held_by_flock` under load).

    .venv/bin/python tools/lock_stress.py --rounds 20            # ~15 min on 2 cores
    .venv/bin/python tools/lock_stress.py --rounds 2 --no-notebooks

Load: one `while True: pass` process per core (os.cpu_count()), niceness 0 like the tests, for the whole run.
Each round: `nbdev_test` of nbs/00_core.ipynb (`locked`, `held_by_flock`, `hold_run_folder` against util-linux flock)
and nbs/10_retrieval.ipynb (concurrent index builders and readers), then the lock cases of 17_runner and 16_scale on
a real run folder made once (`etc_nb_run --method wo_rag --n 2`): util-linux's flock holds its lock and `etc_nb_run`
is refused (exit 2, one line) at once; as soon as `held_by_flock` returns, `hold_run_folder` enters without waiting;
while this process holds the lock of a copy (`locked`), `merge_runs` into it raises `Busy`, and merges once let go.
Prints one line per round and a total; exits 1 on any failure.
"""
import argparse, multiprocessing as mp, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from etc_nb.core import Busy, held_by_flock, hold_run_folder, locked
from etc_nb.runner import cli_command
from etc_nb.scale import merge_runs

def _answer(run:Path)->list: return cli_command() + ['--dataset', '2wikimultihopqa', '--method', 'wo_rag', '--n', '2', '--out', str(run)]

def _spin():
    while True: pass

def _notebook(nb:str)->str|None:
    r = subprocess.run(['nbdev_test', '--path', f'nbs/{nb}.ipynb'], cwd=ROOT, capture_output=True, text=True)
    return None if r.returncode == 0 else f"{nb}: {(r.stdout + r.stderr).strip().splitlines()[-5:]}"

def _run_folder_cases(run:Path)->str|None:
    with held_by_flock(run/'.lock'):
        r = subprocess.run(_answer(run), capture_output=True, text=True)
        if r.returncode != 2 or 'is in use by another process' not in r.stderr: return f"etc_nb_run on a held folder: {r.returncode} {r.stderr[-300:]}"
    try:
        with hold_run_folder(run): pass
    except Busy as e: return f"hold_run_folder right after held_by_flock returned: {e}"
    merged = run.parent/'merged'
    with locked(merged/'.lock'):
        try: merge_runs(merged, [run]); return "merge_runs into a locked folder did not raise Busy"
        except Busy: pass
    return None if merge_runs(merged, [run])['records'] == 2 else "merge_runs after the lock was let go: not 2 records"

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--rounds', type=int, default=20)
    p.add_argument('--no-notebooks', action='store_true', help='only the run-folder cases')
    a = p.parse_args()
    load = [mp.Process(target=_spin, daemon=True) for _ in range(os.cpu_count() or 1)]
    for q in load: q.start()
    tmp = Path(tempfile.mkdtemp()); run = tmp/'run'; failures = 0
    try:
        subprocess.run(_answer(run), check=True, capture_output=True)
        shutil.copytree(run, tmp/'merged')
        for i in range(a.rounds):
            t0 = time.time()
            errs = [e for e in ([] if a.no_notebooks else [_notebook('00_core'), _notebook('10_retrieval')]) + [_run_folder_cases(run)] if e]
            failures += bool(errs)
            print(f"round {i + 1}/{a.rounds}: {'FAILED ' + '; '.join(errs) if errs else 'ok'} ({time.time() - t0:.0f}s, load: {len(load)} busy loops)", flush=True)
    finally:
        for q in load: q.terminate()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{a.rounds - failures} of {a.rounds} rounds passed"); sys.exit(1 if failures else 0)

if __name__ == '__main__': main()
