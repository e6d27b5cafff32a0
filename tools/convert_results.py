"""Convert the committed results to one zstd JSON-lines file per row and split (issue 49), and check the conversion.

    python tools/convert_results.py                 # convert every data/results/**/*.jsonl.gz folder, then check
    python tools/convert_results.py --rev 27efced   # check only: the records of the results at git revision REV (the
                                                    # old `*.jsonl.gz` files) against what the new files hold

For every results folder: every record of the old files equals one record of the new files and none is added
(`json.dumps(sort_keys=True)` of both: key presence, int vs float, every float bit), whether they are read back in the
old files' order is said, not required: an experiment's `question_order` restores the order its export wrote (slice
order), except in the backbone results, whose jobs each kept their own answer order; L-RAG's and the smoke run's files
keep no order. And `summary.csv` recomputed from
the new files equals the committed one (experiments: `summarize`; L-RAG: its export's table; the smoke run: the runner's
summary). Prints one line per folder and exits 1 on any difference.
"""
import argparse, collections, gzip, io, json, subprocess, sys
from pathlib import Path
import numpy as np, pandas as pd
from etc_nb.core import project_root, write_zst
from etc_nb.runs import read_results, record_files, record_list

ROOT = project_root(); RESULTS = ROOT/'data'/'results'

def folder_defaults(cfg:dict)->dict: # row and split of records that name none (L-RAG's and the smoke run's)
    if 'gate' in cfg: return dict(row=cfg['questions']['dataset'], split='dev')      # L-RAG: SQuAD 2.0's dev set
    return dict(row=cfg.get('dataset'), split='test')

def old_records(folder:Path, rev:str|None)->dict: # record list name -> records of the old `<name>.jsonl.gz` files
    out = {}
    names = ([p.name for p in folder.glob('*.jsonl.gz')] if rev is None else
             subprocess.run(['git', 'ls-tree', '--name-only', f'{rev}:{folder.relative_to(ROOT)}'], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split())
    for n in [n for n in names if n.endswith('.jsonl.gz')]:
        raw = ((folder/n).read_bytes() if rev is None else
               subprocess.run(['git', 'show', f'{rev}:{(folder/n).relative_to(ROOT)}'], cwd=ROOT, capture_output=True, check=True).stdout)
        out[n.removesuffix('.jsonl.gz')] = gzip.decompress(raw)
    return out

def listed_order(records:list)->dict: # '<row>-<split>' -> question ids in the order the records first list them
    order = {}
    for r in records: order.setdefault(f"{r['dataset']}-{r['split']}", {}).setdefault(r['qid'])
    return {k: list(qs) for k, qs in order.items()}

def convert(folder:Path)->None:
    "Write the folder's record files from its `*.jsonl.gz` (non-ASCII kept as the old files kept it), then remove those"
    cfg, old = json.loads((folder/'config.json').read_text()), old_records(folder, None)
    ascii_only = all(raw.isascii() for raw in old.values())
    recs = {n: [json.loads(l) for l in raw.splitlines()] for n, raw in old.items()}
    for name, data in record_files(ascii_only, **folder_defaults(cfg), **recs).items(): write_zst(folder/name, data)
    if 'jobs' in cfg:                     # an experiment: each slice's question order as the old file lists it
        (folder/'config.json').write_text(json.dumps(cfg | dict(question_order=listed_order(recs['traces'])), indent=1))
    for n in old: (folder/f'{n}.jsonl.gz').unlink()

def recomputed_summary(folder:Path, cfg:dict, recs:list)->pd.DataFrame:
    if 'jobs' in cfg:
        from etc_nb.experiments import summarize
        return summarize(recs)
    if 'gate' in cfg:
        from etc_nb.lrag import results_table
        return results_table(recs, cfg)
    from etc_nb.runs import summary_table
    return summary_table([r for m in cfg['methods'] for r in recs if r['method'] == m]).reset_index()

def same_summary(folder:Path, cfg:dict, recs:list)->tuple: # (values equal, bit-identical share)
    committed = pd.read_csv(folder/'summary.csv')
    got = recomputed_summary(folder, cfg, recs)
    fmt = '%.10g' if 'gate' in cfg else None                           # (L-RAG's export writes 10 digits)
    got = pd.read_csv(io.StringIO(got.to_csv(index=False, float_format=fmt)))   # through CSV as the committed one went
    if 'index' in got and 'method' in committed: got = got.rename(columns={'index': 'method'})
    got.columns = committed.columns if len(got.columns) == len(committed.columns) else got.columns
    if list(got.columns) != list(committed.columns) or got.shape != committed.shape: return False, 0.0
    num = committed.select_dtypes('number').columns
    same_text = (got.drop(columns=num).astype(str) == committed.drop(columns=num).astype(str)).all().all()
    a, b = got[num].to_numpy(float), committed[num].to_numpy(float)
    close = np.allclose(a, b, rtol=1e-12, atol=0, equal_nan=True)
    return bool(same_text and close), float(((a == b) | (np.isnan(a) & np.isnan(b))).mean()) if a.size else 1.0

def check(folder:Path, rev:str|None)->bool:
    old_files = old_records(folder, rev) if rev else {}          # (none at a revision after the conversion)
    names = sorted({record_list(p) for p in folder.glob('*.jsonl.zst')})
    cfg, _, *lists = read_results(folder, *names)
    ok, counts = True, {}
    for name, raw in old_files.items():
        new = collections.Counter(json.dumps(r, sort_keys=True) for r in lists[names.index(name)])
        old = collections.Counter(json.dumps(json.loads(l), sort_keys=True) for l in raw.splitlines())
        in_order = [json.dumps(r, sort_keys=True) for r in lists[names.index(name)]] == [
            json.dumps(json.loads(l), sort_keys=True) for l in raw.splitlines()]
        counts[name] = (f"{sum(old.values())} old, {sum(new.values())} new, {sum((old & new).values())} equal, "
                        f"{'in' if in_order else 'NOT in'} the old order")
        ok &= old == new
    summ_ok, bits = same_summary(folder, cfg, lists[names.index('traces')])
    files = sorted(p.name for p in folder.glob('*.jsonl.zst'))
    print(f"{folder.relative_to(RESULTS)}: {'ok' if ok and summ_ok else 'DIFFERENT'}; records {counts or 'not compared'}; "
          f"summary.csv recomputed equal: {summ_ok} ({bits:.1%} of its numbers bit-identical); "
          f"{len(files)} files, {sum((folder/f).stat().st_size for f in files) / 1e6:.2f} MB", flush=True)
    return ok and summ_ok

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--rev', help='check only, against the old files at this git revision')
    a = p.parse_args(argv)
    folders = sorted({q.parent for pat in ('**/*.jsonl.gz', '**/*.jsonl.zst') for q in RESULTS.glob(pat)})
    if not a.rev:
        for f in folders:
            if any(f.glob('*.jsonl.gz')): convert(f)
    rev = a.rev or 'HEAD'
    sys.exit(0 if all([check(f, rev) for f in folders]) else 1)

if __name__ == '__main__': main()
