"""Results-format benchmark (issue 37): how small can the committed results be, one file per job, losing nothing?

It decided the layout the results are committed in now (issue 49: one zstd file per row and split, `per_row_split`
below); it reads the committed records from that layout and measures every candidate again.

    python benchmarks/results_format.py             # every committed data/results/<experiment>/<model>/, ~8 min on 2 cores
    python benchmarks/results_format.py --quick     # seconds: the first 3 jobs of the smallest experiment (CI; measures nothing)

A job is what `22_experiments` calls one: the records of one (row, split, method configuration) of one experiment and
model. For every job of the committed results this writes each candidate file in memory, reads it back and checks that
every record compares equal to the committed one (`json.dumps(sort_keys=True)` of both: key presence, int vs float and
every float bit; a candidate that loses anything fails the run). Candidates, one file per job:

- `gzip9`: JSON lines, gzip level 9 (today's codec, split by job);
- `xz9e`: JSON lines, xz preset 9 extreme (standard library);
- `zstd19`: JSON lines, zstd level 19 (window 2^27, long-distance matching);
- `parquet_zstd19`: Parquet, zstd 19, typed columns where a field is uniform (strings, numbers, lists of them), the
  chunks' per-token columns (id, text, word_start, entropy, prob, margin) as `list<list<T>>`, float32 where every value is
  the shortest decimal of a float32 (the traces store them so: `12_loop._f32`), byte-stream-split floats, JSON text for
  the rest (null: field absent);
- `zstd19_anchor`: JSON lines, zstd 19 with the first job of the same (row, split) as a raw-content dictionary (what
  `zstd --patch-from` does; reading a job then needs its anchor's file too).

For scale, two groupings that are not one file per job, zstd 19 with long-distance matching: `per_row_split` (every
job of one row and split in one file) and `per_experiment` (one file per experiment and model). The last line printed
is one JSON object: bytes per candidate, seconds to write and to read back, and the bytes the results may take so that
the tracked tree stays within `--budget-mib` (the tree's other files counted with `git ls-files`).
"""
import argparse, collections, gzip, io, json, lzma, subprocess, sys, time
from pathlib import Path
import numpy as np, pyarrow as pa, pyarrow.parquet as pq, zstandard as zstd

ROOT = Path(__file__).resolve().parents[1]

def _zstd(dict_bytes=None): # a zstd 19 compressor with long-distance matching (and a raw-content dictionary)
    params = zstd.ZstdCompressionParameters.from_level(19, window_log=27, enable_ldm=True)
    d = zstd.ZstdCompressionDict(dict_bytes, dict_type=zstd.DICT_TYPE_RAWCONTENT) if dict_bytes else None
    return zstd.ZstdCompressor(compression_params=params, dict_data=d)

def _jsonl(records)->bytes: return ''.join(json.dumps(r) + '\n' for r in records).encode()
def _unjsonl(b:bytes)->list: return [json.loads(l) for l in b.decode().splitlines()]

_TYPES = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}

def _arrow_type(values): # the Arrow type of values of one exact Python type (float32 where lossless), else None
    types = {type(v) for v in values}
    if len(types) != 1 or (t := types.pop()) not in _TYPES: return None
    if t is float:
        a = np.asarray(values, np.float64)
        if np.array_equal(a.astype(np.float32).astype(str).astype(np.float64), a, equal_nan=True): return pa.float32()
    if t is int and not all(-2**63 <= v < 2**63 for v in values): return None
    return _TYPES[t]

def _column_type(values): # a scalar column, or a list column of scalars
    if t := _arrow_type(values): return t
    items = [x for v in values for x in v] if all(type(v) is list for v in values) else []
    return pa.list_(t) if items and (t := _arrow_type(items)) else None

def _token_keys(records)->list|None: # the per-token keys when every chunk has the same `tokens` columns of one type each
    chunks = [c for r in records for c in r.get('chunks') or []] if all(type(r.get('chunks')) is list for r in records) else []
    if not chunks or not all(type(c) is dict and type(c.get('tokens')) is dict for c in chunks): return None
    if len(keys := {tuple(c['tokens']) for c in chunks}) != 1: return None
    keys = list(keys.pop())
    return keys if all(_arrow_type([x for c in chunks for x in c['tokens'][k]]) for k in keys) else None

def to_parquet(records)->bytes:
    "One job's records as a Parquet file (typed columns where lossless, JSON text otherwise)"
    tokens = _token_keys(records); cols, fields, as_json = {}, [], []
    for k in dict.fromkeys(k for r in records for k in r):
        vals = [r.get(k) for r in records]
        if k == 'chunks' and tokens: vals = [[c | {'tokens': None} for c in v] for v in vals]
        t = _column_type(vals) if all(k in r for r in records) else None
        if t is None: as_json.append(k); t = pa.string(); vals = [json.dumps(v) if k in r else None for v, r in zip(vals, records)]
        cols[k] = vals; fields.append(pa.field(k, t))
    for k in tokens or []:
        cols[f'tokens.{k}'] = [[c['tokens'][k] for c in r['chunks']] for r in records]
        fields.append(pa.field(f'tokens.{k}', pa.list_(pa.list_(_arrow_type([x for r in records for c in r['chunks'] for x in c['tokens'][k]])))))
    meta = json.dumps({'json': as_json, 'tokens': tokens or []})
    table = pa.table(cols, schema=pa.schema(fields, metadata={'etc_nb': meta}))
    floats = [f.name + '.list.element' * _depth(f.type) for f in fields if pa.types.is_floating(_leaf(f.type))]
    buf = io.BytesIO()
    pq.write_table(table, buf, compression='zstd', compression_level=19, use_byte_stream_split=floats or False, write_statistics=False,
                   use_dictionary=[f.name for f in fields if not pa.types.is_floating(_leaf(f.type))])
    return buf.getvalue()

def _leaf(t):
    while pa.types.is_list(t): t = t.value_type
    return t
def _depth(t)->int: return 0 if not pa.types.is_list(t) else 1 + _depth(t.value_type)

def _values(col)->list: # a column as Python values; float32 leaves back to the shortest decimals they were written from
    if _leaf(col.type) != pa.float32(): return col.to_pylist()
    a, offsets = col.combine_chunks(), []
    while pa.types.is_list(a.type): offsets.append(a.offsets.to_numpy()); a = a.flatten()
    vals = [None if m else v for v, m in zip(np.asarray(a.fill_null(0).to_numpy(), np.float32).astype(str).astype(float).tolist(), a.is_null().to_pylist())]
    for o in reversed(offsets): vals = [vals[i:j] for i, j in zip(o[:-1], o[1:])]
    return vals

def from_parquet(b:bytes)->list:
    "Records back from `to_parquet`"
    t = pq.read_table(io.BytesIO(b)); meta = json.loads(t.schema.metadata[b'etc_nb'])
    cols = {n: _values(t.column(n)) for n in t.column_names}; tok = {f'tokens.{k}': k for k in meta['tokens']}
    out = []
    for i in range(t.num_rows):
        r = {n: (json.loads(v[i]) if n in meta['json'] else v[i]) for n, v in cols.items()
             if n not in tok and not (n in meta['json'] and v[i] is None)}
        for j, c in enumerate(r.get('chunks') or [] if tok else []): c['tokens'] = {k: cols[n][i][j] for n, k in tok.items()}
        out.append(r)
    return out

def _zstd_decompress(b:bytes, dict_bytes=None)->bytes:
    d = zstd.ZstdCompressionDict(dict_bytes, dict_type=zstd.DICT_TYPE_RAWCONTENT) if dict_bytes else None
    return zstd.ZstdDecompressor(dict_data=d).decompress(b)

CODECS = { # name -> (encode(records, their JSON lines, anchor bytes), decode(file, anchor bytes))
    'gzip9': (lambda rs, raw, a: gzip.compress(raw, 9, mtime=0), lambda b, a: _unjsonl(gzip.decompress(b))),
    'xz9e': (lambda rs, raw, a: lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME), lambda b, a: _unjsonl(lzma.decompress(b))),
    'zstd19': (lambda rs, raw, a: _zstd().compress(raw), lambda b, a: _unjsonl(_zstd_decompress(b))),
    'parquet_zstd19': (lambda rs, raw, a: to_parquet(rs), lambda b, a: from_parquet(b)),
    'zstd19_anchor': (lambda rs, raw, a: _zstd(a).compress(raw), lambda b, a: _unjsonl(_zstd_decompress(b, a))),
}

def trace_files(folder:Path)->list: # the folder's trace files (`<row>-<split>.jsonl.zst`; not L-RAG's `.verify.` ones)
    return [f for f in sorted(folder.glob('*.jsonl.zst')) if '.' not in f.name.removesuffix('.jsonl.zst')]

def jobs_of(folder:Path)->dict: # (row, split, method) -> records, in file order
    jobs = collections.defaultdict(list)
    for f in trace_files(folder):
        for r in _unjsonl(_zstd_decompress(f.read_bytes())): jobs[(r.get('dataset'), r.get('split'), r['method'])].append(r)
    return jobs

def _same(a:list, b:list)->bool: return [json.dumps(r, sort_keys=True) for r in a] == [json.dumps(r, sort_keys=True) for r in b]

def measure(paths:list, max_jobs:int|None=None)->dict:
    "Bytes, write and read seconds of every candidate over the jobs of `paths`; raises if one loses anything"
    size, t_write, t_read, n_jobs, n_records = collections.Counter(), collections.Counter(), collections.Counter(), 0, 0
    for path in paths:
        jobs = list(jobs_of(path).items())[:max_jobs]; anchors = {}
        for (row, split, method), recs in jobs:
            raw = _jsonl(recs); anchor = anchors.setdefault((row, split), raw); n_jobs += 1; n_records += len(recs)
            for name, (enc, dec) in CODECS.items():
                a = anchor if name == 'zstd19_anchor' and anchor != raw else None
                t0 = time.perf_counter(); b = enc(recs, raw, a); t1 = time.perf_counter(); back = dec(b, a); t2 = time.perf_counter()
                if not _same(back, recs): raise AssertionError(f"{name} lost something in {path} {row}/{split} {method}")
                size[name] += len(b); t_write[name] += t1 - t0; t_read[name] += t2 - t1
        for name, groups in (('per_row_split', _by_row_split(jobs)), ('per_experiment', [[r for _, rs in jobs for r in rs]])):
            for recs in groups: size[name] += len(_zstd().compress(_jsonl(recs)))
        print(f"{path.relative_to(ROOT)}: {len(jobs)} jobs, {dict((k, round(v / 1e6, 2)) for k, v in size.items())} MB so far", file=sys.stderr, flush=True)
    return dict(jobs=n_jobs, records=n_records, bytes=dict(size), write_s={k: round(v, 1) for k, v in t_write.items()},
                read_s={k: round(v, 1) for k, v in t_read.items()})

def _by_row_split(jobs)->list:
    g = collections.defaultdict(list)
    for (row, split, _), recs in jobs: g[row, split] += recs
    return list(g.values())

def tree_bytes()->int: # bytes of the tracked files other than the results' JSON-lines files
    files = subprocess.run(['git', 'ls-files', '-z'], cwd=ROOT, capture_output=True, check=True).stdout.decode().split('\0')
    return sum((ROOT/f).stat().st_size for f in files if f and not (f.startswith('data/results/') and f.endswith('.jsonl.zst')) and (ROOT/f).is_file())

def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--quick', action='store_true', help='the first 3 jobs of the smallest experiment (CI: measures nothing)')
    p.add_argument('--budget-mib', type=float, default=40, help='the tracked tree budget (MiB)')
    a = p.parse_args(argv)
    size = lambda d: sum(f.stat().st_size for f in trace_files(d))
    paths = sorted({f.parent for f in (ROOT/'data'/'results').glob('**/*.jsonl.zst')}, key=lambda d: size(d) if a.quick else str(d))
    if not paths: sys.exit("benchmarks/results_format.py: no data/results/**/*.jsonl.zst to measure")
    out = measure(paths[:1] if a.quick else paths, 3 if a.quick else None)
    other = tree_bytes(); out |= dict(committed_bytes=sum(map(size, paths)), other_tracked_bytes=other,
                                      results_budget_bytes=int(a.budget_mib * 2**20) - other, quick=a.quick)
    print(json.dumps(out))

if __name__ == '__main__': main()
