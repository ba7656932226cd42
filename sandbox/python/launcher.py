def _atomworld_run(entry=None, path=None):
    """Runs the program `main.py` in the `__main__` module's own namespace (so it reads as a
    script run by `python main.py`) and, given an `entry`, calls that function of it and
    prints its result as JSON after a `\x1e` marker, which the host turns into a line break
    (or removes when one precedes it). Shared by every sandbox backend: the wasm backend runs
    this file with `-c` (argv: `main.py [entry]`, in /scratch); the worker of the bwrap and
    container backends calls it with the entry and the program's path.
    """
    import sys
    g = sys.modules['__main__'].__dict__
    g.pop('_atomworld_run', None)
    if path is None:
        import os
        os.chdir('/scratch')
        entry = sys.argv[2] if len(sys.argv) > 2 else None
        sys.argv = ['main.py']
        path = '/scratch/main.py'
    g['__file__'] = path
    with open('main.py', encoding='utf-8') as f:
        src = f.read()
    exec(compile(src, 'main.py', 'exec'), g)
    if entry is None:
        return
    fn = g.get(entry)
    if not callable(fn):
        print(f'entry {entry!r} is not a function defined by the program', file=sys.stderr)
        raise SystemExit(2)
    result = fn()
    import json
    line = json.dumps(result, default=repr)
    sys.stdout.write('\x1e' + line + '\n')
    sys.stdout.flush()
