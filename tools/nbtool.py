"""Notebook helpers for etc_nb developers (not part of the package).

    python tools/nbtool.py py2nb SRC.py DST.ipynb   # percent-format script -> notebook (cell ids kept stable)
    python tools/nbtool.py nb2py SRC.ipynb DST.py   # notebook -> percent-format script, for editing
    python tools/nbtool.py run NB.ipynb [NB ...]    # execute in place through the etc_nb kernel: tools/run_notebooks.py

Percent format: a line `# %%` starts a code cell, `# %% [markdown]` a markdown cell whose lines are `# `-prefixed
(or a plain triple-quoted block). Run `nbdev_clean` afterwards.
"""
import hashlib, json, re, sys
from pathlib import Path

_hdr = re.compile(r'^# %%(?:\s*\[(markdown|md|raw)\])?\s*$')

def _lines(s): return [l + '\n' for l in s.split('\n')[:-1]] + [s.split('\n')[-1]] if s else []

def _md_body(lines):
    if lines and lines[0].strip() in ('"""', "'''") and lines[-1].strip() == lines[0].strip(): return lines[1:-1]
    return [l[2:] if l.startswith('# ') else l[1:] if l.startswith('#') else l for l in lines]

def parse_py(text):
    "List of (cell_type, source) from percent-format `text`"
    cells, kind, buf = [], None, []
    def flush():
        if kind is None: return
        while buf and not buf[-1].strip(): buf.pop()
        while buf and not buf[0].strip(): buf.pop(0)
        body = _md_body(buf) if kind == 'markdown' else buf
        cells.append((kind, '\n'.join(body)))
    for line in text.split('\n'):
        m = _hdr.match(line)
        if m:
            flush(); buf = []
            kind = 'code' if m.group(1) is None else ('raw' if m.group(1) == 'raw' else 'markdown')
        elif kind is not None: buf.append(line)
    flush()
    return cells

def _cid(src, seen):
    h = hashlib.md5(src.encode()).hexdigest()[:8]
    while h in seen: h = hashlib.md5((h + src).encode()).hexdigest()[:8]
    seen.add(h); return h

def _kept_ids(old_cells, new_cells):
    "Old cell ids for new cells, by aligning sources (difflib): unchanged and edited-in-place cells keep their id"
    import difflib
    key = lambda c: (c['cell_type'], ''.join(c['source']) if isinstance(c['source'], list) else c['source'])
    ids = {}
    sm = difflib.SequenceMatcher(None, [key(c) for c in old_cells], [key(c) for c in new_cells], autojunk=False)
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op not in ('equal', 'replace'): continue
        for o, n in zip(range(i1, i2), range(j1, j2)):
            if old_cells[o]['cell_type'] == new_cells[n]['cell_type'] and 'id' in old_cells[o]: ids[n] = old_cells[o]['id']
    return ids

def py2nb(src, dst):
    "Write notebook `dst` from percent-format `src`, keeping outputs of unchanged code cells and the ids of cells edited in place"
    olds = json.loads(Path(dst).read_text())['cells'] if Path(dst).exists() else []
    old = {''.join(c['source']): c.get('outputs', []) for c in olds if c['cell_type'] == 'code'}
    cells = [dict(cell_type=kind, metadata={}, source=s) for kind, s in parse_py(Path(src).read_text())]
    kept = _kept_ids(olds, cells)
    seen = set(kept.values())
    for n, c in enumerate(cells):
        s = c['source']
        c.update(id=kept.get(n) or _cid(s, seen), source=_lines(s))
        if c['cell_type'] == 'code': c.update(execution_count=None, outputs=old.get(s, []))
    nb = dict(cells=cells, metadata=dict(kernelspec=dict(display_name='python3', language='python', name='python3')),
              nbformat=4, nbformat_minor=5)
    Path(dst).write_text(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + '\n')

def nb2py(src, dst):
    "Percent-format script from notebook `src`"
    out = []
    for c in json.loads(Path(src).read_text())['cells']:
        s = ''.join(c['source'])
        if c['cell_type'] == 'code': out.append('# %%\n' + s)
        else: out.append(f"# %% [{'markdown' if c['cell_type']=='markdown' else 'raw'}]\n" + '\n'.join('# '+l if l else '#' for l in s.split('\n')))
    Path(dst).write_text('\n\n'.join(out) + '\n')

if __name__ == '__main__':
    cmd, *args = sys.argv[1:]
    if cmd == 'py2nb': py2nb(*args)
    elif cmd == 'nb2py': nb2py(*args)
    elif cmd == 'run':
        import run_notebooks; sys.exit(run_notebooks.main(args))
    else: sys.exit(__doc__)
