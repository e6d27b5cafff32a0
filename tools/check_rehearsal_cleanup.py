#!/usr/bin/env python
"""`benchmarks/gpu_rehearsal.py`'s model folders, checked with stub phases (seconds, no model): one folder at a time,
none left by a failed build (a 13B folder is 26 GB in /dev/shm), the last model's kept for the last phases only when built,
whatever `--phases` holds. Exits 1 on the first breach."""
import shutil, sys, tempfile, types
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]/'benchmarks')); import gpu_rehearsal as g
seen = {}
def fake_build(name, a, tok, folder):
    folder.mkdir(parents=True); (folder/'model.safetensors').write_bytes(b'x' * 1000)
    if name == a.fail: raise OSError('No space left on device')   # a build that fails halfway
    return dict(params=1)
g.load_tokenizer = lambda *args: (object(), 'fake')
g.build, g.header = fake_build, lambda a: dict(models={}, errors={}, phase_s={})
g.cli_phase = lambda name, folder, *rest: seen.setdefault('cli', []).append((name, sorted(p.name for p in folder.parent.iterdir())))
g.reference_phase = lambda *args: None
g.kill_resume = lambda name, folder, *rest: seen.setdefault('kill_resume', []).append((name, folder.exists()))
for phases, fail in (({'kill_resume'}, None), ({'kill_resume'}, 'phi-2'), ({'cli', 'kill_resume'}, 'llama-2-7b-chat'),
                     ({'cli', 'kill_resume'}, 'vicuna-13b-v1.5')):
    seen.clear(); work = Path(tempfile.mkdtemp())
    a = types.SimpleNamespace(inputs=None, n=1, models=['llama-2-7b-chat', 'vicuna-13b-v1.5', 'phi-2'], phases=phases, fail=fail)
    res = g.rehearse(a, work, work/'out.json')
    left = sorted(p.name for p in (work/'models').iterdir())
    print(sorted(phases), 'fail:', fail, '| left:', left, '| errors:', sorted(res['errors']), '| seen:', seen)
    assert left == ([] if fail == 'phi-2' else ['phi-2']), left
    assert 'model_folders' not in res['errors']
    assert seen.get('kill_resume') == (None if fail == 'phi-2' else [('phi-2', True)])
    for name, present in seen.get('cli', []): assert present == [name], present   # one model folder at a time
    shutil.rmtree(work)
print('ok')
