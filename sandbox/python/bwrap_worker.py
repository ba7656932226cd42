"""The in-sandbox worker of the `bwrap` and `container` backends (trusted code, run inside
bubblewrap or a container).

It imports the modules named by --preload once, says READY, then serves requests, one JSON
object per line on stdin, each answered by one JSON line on stdout. Every request runs in a
freshly forked child (so nothing a run does reaches the next one) inside /work/run, under
rlimits; afterwards every other process in the PID namespace is killed and the scratch
directories are wiped. With --once it serves one request and exits (the cold mode).

Request: {"code", "files": [[path, b64]], "stdin": b64, "entry": str|null,
          "links": [[relpath, target]], "wall": s, "cpu": s, "memory": bytes,
          "output": bytes, "scratch": bytes}
Answer:  {"stdout": b64, "stderr": b64, "stdout_cut", "stderr_cut", "exit_code", "signal",
          "timed_out", "cpu_exceeded", "peak_rss": bytes, "scratch_used": bytes,
          "oom_kills", "files": [[path, b64]], "error"}
oom_kills counts the kills of the sandbox's memory cgroup during the run, where the cgroup is
visible (a container; 0 under bubblewrap, which mounts no /sys).
"""

import base64
import json
import os
import resource
import select
import shutil
import signal
import sys
import time

RUN = "/work/run"
WIPE = ("/work", "/tmp", "/dev/shm")
MAX_FILE = 1 << 20
MAX_FILES = 32
DRAIN = 0.25

# The backends' one launcher, shipped beside this file.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "launcher.py"), encoding="utf-8") as _f:
    LAUNCHER = _f.read()


def vm_size():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


OOM_FILES = ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events")


def oom_kills():
    """The memory cgroup's count of OOM kills so far (0 where no cgroup file is visible)."""
    for path in OOM_FILES:
        try:
            with open(path) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            continue
    return 0


def wipe():
    """Kills every process but init and this one, then empties the writable places."""
    me = os.getpid()
    for _ in range(50):
        others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]
        if not others:
            break
        for pid in others:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            while os.waitpid(-1, os.WNOHANG)[0] > 0:
                pass
        except ChildProcessError:
            pass
        time.sleep(0.005)
    for top in WIPE:
        try:
            names = os.listdir(top)
        except OSError:
            continue
        for name in names:
            path = os.path.join(top, name)
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
            except OSError:
                pass


def prepare(req):
    os.makedirs(RUN)
    inputs = {}
    for rel, b64 in req.get("files", []):
        data = base64.b64decode(b64)
        path = os.path.join(RUN, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        inputs[rel] = data
    for rel, target in req.get("links", []):
        path = os.path.join(RUN, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        os.symlink(target, path)
    with open(os.path.join(RUN, "main.py"), "w", encoding="utf-8") as f:
        f.write(req["code"])
    with open("/work/stdin", "wb") as f:
        f.write(base64.b64decode(req.get("stdin", "")))
    return inputs


def child(req, out_w, err_w, base_vm):
    """Runs the request's program; never returns (the fork must not reach the serve loop)."""
    _exit = os._exit
    try:
        os.setsid()
        os.chdir(RUN)
        fd = os.open("/work/stdin", os.O_RDONLY)
        os.dup2(fd, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.closerange(3, 1 << 16)
        cpu = max(1, int(req["cpu"] + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        mem = base_vm + int(req["memory"])
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(req["scratch"]), int(req["scratch"])))
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        sys.stdin = open(0, "r", encoding="utf-8", errors="replace", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        sys.argv = ["main.py"]
        import types

        sys.modules["__main__"] = types.ModuleType("__main__")
        ns = {}
        exec(LAUNCHER, ns)
        code = 0
        try:
            ns["_atomworld_run"](req.get("entry"), os.path.join(RUN, "main.py"))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if e.code is not None and not isinstance(e.code, int):
                print(e.code, file=sys.stderr)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            pass
        _exit(code)
    finally:
        _exit(70)


def serve(req, base_vm):
    wipe()
    inputs = prepare(req)
    ooms = oom_kills()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        os.close(err_r)
        child(req, out_w, err_w, base_vm)
    os.close(out_w)
    os.close(err_w)
    cap = int(req["output"])
    bufs = {out_r: bytearray(), err_r: bytearray()}
    cut = {out_r: False, err_r: False}
    deadline = time.monotonic() + float(req["wall"])
    timed_out = False
    open_fds = [out_r, err_r]
    # A process the program left behind may hold the pipes open: once the program itself
    # has exited, read for DRAIN seconds more, then stop (wipe() kills the rest).
    reaped = None
    drain_until = None
    while open_fds:
        now = time.monotonic()
        left = deadline - now
        if left <= 0:
            timed_out = True
            break
        if reaped is None:
            done = os.wait4(pid, os.WNOHANG)
            if done[0] == pid:
                reaped = done
                drain_until = now + DRAIN
        if drain_until is not None:
            if now >= drain_until:
                break
            left = min(left, drain_until - now)
        ready, _, _ = select.select(open_fds, [], [], min(left, 0.1))
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
                continue
            room = cap - len(bufs[fd])
            if room > 0:
                bufs[fd] += chunk[:room]
            if len(chunk) > room:
                cut[fd] = True
    if timed_out:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    _, status, usage = reaped if reaped is not None else os.wait4(pid, 0)
    os.close(out_r)
    os.close(err_r)
    exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    files = []
    used = 0
    for dirpath, dirnames, filenames in os.walk(RUN):
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, RUN)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            used += os.path.getsize(path)
            if rel == "main.py":
                continue
            if os.path.getsize(path) > MAX_FILE:
                continue
            with open(path, "rb") as f:
                data = f.read()
            if inputs.get(rel) == data:
                continue
            files.append([rel, base64.b64encode(data).decode()])
    files.sort()
    wipe()
    return {
        "stdout": base64.b64encode(bytes(bufs[out_r])).decode(),
        "stderr": base64.b64encode(bytes(bufs[err_r])).decode(),
        "stdout_cut": cut[out_r],
        "stderr_cut": cut[err_r],
        "exit_code": exit_code,
        "signal": sig,
        "timed_out": timed_out,
        "cpu_exceeded": sig in (signal.SIGXCPU, signal.SIGKILL) and not timed_out,
        "peak_rss": usage.ru_maxrss * 1024,
        "scratch_used": used,
        "oom_kills": max(0, oom_kills() - ooms),
        "files": files[:MAX_FILES],
    }


def main():
    args = sys.argv[1:]
    once = "--once" in args
    preload = []
    if "--preload" in args:
        preload = [m for m in args[args.index("--preload") + 1].split(",") if m]
    for name in preload:
        try:
            __import__(name)
        except Exception as e:  # a missing optional module must not stop the worker
            print(f"preload {name}: {e!r}", file=sys.stderr)
    import gc

    gc.collect()
    gc.freeze()
    base_vm = vm_size()
    proto_in = sys.stdin.buffer
    proto_out = sys.stdout
    proto_out.write("READY\n")
    proto_out.flush()
    while True:
        line = proto_in.readline()
        if not line:
            return
        try:
            answer = serve(json.loads(line), base_vm)
        except Exception as e:
            wipe()
            answer = {"error": f"{type(e).__name__}: {e}"}
        proto_out.write(json.dumps(answer) + "\n")
        proto_out.flush()
        if once:
            return


if __name__ == "__main__":
    main()
