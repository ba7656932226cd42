//! The escape and abuse cases of the worker backends (`bwrap`, `container`): what
//! model-written code tries (network, host files, fork and memory bombs, sleeping, huge
//! output, orphans, state left for the next run) and what it gets. Each case takes the
//! backend under test; the per-backend test files name the tests, so a failure says which
//! backend it was.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sandbox::{Backend, CancelToken, Limit, Limits, Outcome, Program, Sandbox, SandboxError};

use super::{quick, run};

/// Prints how many processes the run can see (in its PID namespace).
pub const COUNT_PROCESSES: &str =
    "import os\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]))";

/// Runs a program whose entry returns its sorted environment plus `extra` (more entries of
/// the returned dict, Python syntax); checks it runs as uid 65534 in `/work/run` with no
/// variable but `allowed`, and returns the entry's result.
pub async fn runs_as_nobody_with_an_entry(
    b: &dyn Backend,
    extra: &str,
    allowed: &[&str],
) -> serde_json::Value {
    let code = format!(
        "import os, json\n\
         print(os.getuid(), os.getcwd())\n\
         def result():\n    return {{'env': sorted(os.environ), {extra}}}\n"
    );
    let program = Program::new(code).with_entry("result");
    let o = b
        .run(&program, &quick(), &CancelToken::new())
        .await
        .unwrap();
    assert!(o.success(), "{o:?}");
    assert!(o.stdout.starts_with("65534 /work/run\n"), "{}", o.stdout);
    let result = o.entry_result.unwrap();
    let env: Vec<String> = serde_json::from_value(result["env"].clone()).unwrap();
    for k in &env {
        assert!(allowed.contains(&k.as_str()), "unexpected variable {k}");
    }
    result
}

/// Neither the host's loopback nor the internet nor DNS answers; returns the outcome, whose
/// last line lists `/sys/class/net` (or says `no sysfs`).
pub async fn no_network(b: &dyn Backend) -> Outcome {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let code = format!(
        "import socket\n\
         for target in [('127.0.0.1', {port}), ('1.1.1.1', 80)]:\n\
         \x20   s = socket.socket(); s.settimeout(2)\n\
         \x20   try:\n\
         \x20       s.connect(target); print('CONNECTED', target)\n\
         \x20   except OSError as e:\n\
         \x20       print('refused', type(e).__name__)\n\
         try:\n\
         \x20   socket.gethostbyname('pypi.org'); print('RESOLVED')\n\
         except OSError:\n\
         \x20   print('no dns')\n\
         import os\n\
         print(sorted(os.listdir('/sys/class/net')) if os.path.exists('/sys/class/net') else 'no sysfs')\n"
    );
    let o = run(b, &code, &quick()).await;
    assert!(o.success(), "{o:?}");
    assert!(!o.stdout.contains("CONNECTED"), "{}", o.stdout);
    assert!(!o.stdout.contains("RESOLVED"), "{}", o.stdout);
    assert_eq!(o.stdout.matches("refused").count(), 2, "{}", o.stdout);
    drop(listener);
    o
}

/// None of `hidden` exists inside, none of `unwritable` can be written, and the scratch can.
pub async fn host_files_are_hidden_and_only_scratch_is_writable(
    b: &dyn Backend,
    hidden: &[&str],
    unwritable: &[&str],
) {
    let code = format!(
        "import os\n\
         for p in {hidden:?}:\n\
         \x20   print(p, os.path.exists(p))\n\
         for p in {unwritable:?}:\n\
         \x20   try:\n\
         \x20       open(p, 'w').write('x'); print('WROTE', p)\n\
         \x20   except OSError as e:\n\
         \x20       print('denied', p)\n\
         open('/work/run/ok.txt', 'w').write('fine')\n"
    );
    let o = run(b, &code, &quick()).await;
    assert!(o.success(), "{o:?}");
    assert!(!o.stdout.contains("WROTE"), "{}", o.stdout);
    assert_eq!(
        o.stdout.matches("denied").count(),
        unwritable.len(),
        "{}",
        o.stdout
    );
    for p in hidden {
        let line = format!("{p} False");
        assert!(o.stdout.lines().any(|l| l == line), "{line}: {}", o.stdout);
    }
    assert_eq!(o.file("ok.txt"), Some(&b"fine"[..]));
}

/// A sleeping program is stopped at its 2 s wall limit, its output so far kept, and the
/// backend serves the next run.
pub async fn a_sleeping_program_is_stopped_at_its_wall_limit(b: &dyn Backend) {
    let limits = Limits {
        wall: Duration::from_secs(2),
        ..Limits::default()
    };
    let t = Instant::now();
    let o = run(
        b,
        "import time\nprint('start', flush=True)\ntime.sleep(1000)",
        &limits,
    )
    .await;
    assert_eq!(o.stopped_by, Some(Limit::TimedOut), "{o:?}");
    assert_eq!(o.stdout, "start\n");
    // The program would sleep 1000 s: stopped within the 2 s limit plus the backend's own
    // grace (a worker's kill and replacement, or a container's stop, take up to a few
    // seconds on a loaded 2-core machine), never anywhere near its sleep.
    assert!(t.elapsed() < Duration::from_secs(6), "{:?}", t.elapsed());
    // The worker survives (or is replaced) and serves the next run.
    let o = run(b, "print('next')", &quick()).await;
    assert_eq!(o.stdout, "next\n");
}

/// A busy loop is stopped by its 1 s CPU limit well before its wall limit.
pub async fn cpu_loops_hit_the_cpu_limit(b: &dyn Backend) {
    let limits = Limits {
        wall: Duration::from_secs(30),
        cpu: Some(Duration::from_secs(1)),
        ..Limits::default()
    };
    let t = Instant::now();
    let o = run(b, "while True:\n    pass", &limits).await;
    assert_eq!(o.stopped_by, Some(Limit::TimedOut), "{o:?}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
}

/// 2 GiB under a 128 MiB limit gets `MemoryError`; 32 MiB is fine.
pub async fn a_memory_bomb_gets_memory_error(b: &dyn Backend) {
    let limits = Limits {
        memory_bytes: 128 << 20,
        ..quick()
    };
    let o = run(b, "x = bytearray(2 << 30)\nprint(len(x))", &limits).await;
    assert_eq!(o.stopped_by, Some(Limit::MemoryExceeded), "{o:?}");
    assert!(o.stderr.contains("MemoryError"), "{}", o.stderr);
    // Within the limit is fine.
    let o = run(b, "x = bytearray(32 << 20)\nprint(len(x))", &limits).await;
    assert!(o.success(), "{o:?}");
}

/// A fork bomb is stopped, and the next run sees `processes` processes (the sandbox's own
/// and itself): nothing is left.
pub async fn a_fork_bomb_is_contained_and_leaves_nothing_behind(b: &dyn Backend, processes: usize) {
    let limits = Limits {
        wall: Duration::from_secs(3),
        ..Limits::default()
    };
    let t = Instant::now();
    let o = run(
        b,
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass",
        &limits,
    )
    .await;
    assert!(o.exit_code != Some(0), "{o:?}");
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    let o = run(b, COUNT_PROCESSES, &quick()).await;
    assert_eq!(o.stdout.trim(), processes.to_string(), "{o:?}");
}

/// 1 GB of output is cut at a 1 MiB cap; stderr still comes back.
pub async fn huge_output_is_cut_at_the_cap(b: &dyn Backend) {
    let limits = Limits {
        output_bytes: 1 << 20,
        ..quick()
    };
    // 1 GB written in 1 MiB pieces.
    let o = run(
        b,
        "import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\nprint('END', file=sys.stderr)",
        &limits,
    )
    .await;
    assert_eq!(
        o.stopped_by,
        Some(Limit::OutputTruncated),
        "{:?}",
        o.stopped_by
    );
    assert_eq!(o.stdout.len(), 1 << 20);
    assert!(o.stderr.contains("END"));
}

/// Orphaned processes (the forked one ignoring SIGTERM when `orphan_ignores_sigterm`), a
/// patched module and files in `/tmp`, `/work` and `/dev/shm` do not reach the next run,
/// which sees `processes` processes.
pub async fn orphans_and_state_do_not_reach_the_next_run(
    b: &dyn Backend,
    processes: usize,
    orphan_ignores_sigterm: bool,
) {
    let ignore = if orphan_ignores_sigterm {
        "    signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    } else {
        ""
    };
    let code = format!(
        "import os, subprocess, json, signal\n\
         subprocess.Popen(['sleep', '1000'], start_new_session=True)\n\
         if os.fork() == 0:\n    os.setsid()\n{ignore}    import time\n    time.sleep(1000)\n\
         json.dumps = None\n\
         open('/tmp/left.txt', 'w').write('x')\n\
         open('/work/left.txt', 'w').write('x')\n\
         open('/dev/shm/left', 'w').write('x')\n\
         print('planted')\n"
    );
    let o = run(b, &code, &quick()).await;
    assert_eq!(o.stdout, "planted\n", "{o:?}");
    let check = "import os, json\n\
        print(json.dumps({'ok': 1}))\n\
        print([p for p in ['/tmp/left.txt', '/work/left.txt', '/dev/shm/left'] if os.path.exists(p)])\n\
        print(len([p for p in os.listdir('/proc') if p.isdigit()]))\n";
    let o = run(b, check, &quick()).await;
    assert_eq!(
        o.stdout,
        format!("{{\"ok\": 1}}\n[]\n{processes}\n"),
        "{o:?}"
    );
}

/// A data mount (`fixtures`, a directory readable by others) is linked read-only into a
/// run's scratch, and a link to a mount the backend lacks is refused. `with_mount` makes the
/// backend with the mount (or `None` to skip).
pub async fn data_mounts_are_linked_read_only<B: Backend>(
    with_mount: impl FnOnce((String, PathBuf)) -> Option<B>,
) {
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("GaN.vasp"), "Ga N\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let open = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(data.path(), open).unwrap();
    }
    let Some(b) = with_mount(("fixtures".into(), data.path().to_path_buf())) else {
        return;
    };
    let program = Program::new(
        "print(open('in/files/GaN.vasp').read().strip())\n\
         try:\n    open('in/files/new', 'w')\nexcept OSError:\n    print('read-only')\n",
    )
    .with_data_link("in/files", "fixtures");
    let o = b
        .run(&program, &quick(), &CancelToken::new())
        .await
        .unwrap();
    assert_eq!(o.stdout, "Ga N\nread-only\n", "{o:?}");
    let bad = Program::new("").with_data_link("x", "nope");
    let err = b
        .run(&bad, &quick(), &CancelToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::InvalidProgram(_)), "{err}");
}

/// Runs `code(i)` for i in 0..50 through `b` two at a time (quick limits); each must print
/// `i * 2`. Gives the sandbox back.
pub async fn fifty_concurrent_runs(b: Arc<dyn Backend>, code: fn(usize) -> String) -> Sandbox {
    let sandbox = Sandbox::new(b, 2).with_default_limits(quick());
    let mut tasks = Vec::new();
    for i in 0..50 {
        let s = sandbox.clone();
        let program = Program::new(code(i));
        tasks.push(tokio::spawn(async move { s.run(&program).await }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        let o = t.await.unwrap().unwrap();
        assert_eq!(o.stdout.trim(), (i * 2).to_string());
    }
    sandbox
}

/// A run cancelled after 0.5 s returns `Cancelled` promptly.
pub async fn cancelling_kills_the_run(b: &dyn Backend) {
    let cancel = CancelToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        c.cancel();
    });
    let t = Instant::now();
    let err = b
        .run(
            &Program::new("import time\ntime.sleep(60)"),
            &quick(),
            &cancel,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, SandboxError::Cancelled), "{err}");
    assert!(t.elapsed() < Duration::from_secs(5));
}

/// A pymatgen structure task runs (on a warm pymatgen worker).
pub async fn a_pymatgen_structure_task_runs(b: &dyn Backend) {
    let code = "from pymatgen.core import Lattice, Structure\n\
        s = Structure(Lattice.cubic(4.2), ['Na', 'Cl'], [[0, 0, 0], [0.5, 0.5, 0.5]])\n\
        s.remove_sites([1])\n\
        print(s.composition.reduced_formula, round(s.volume, 3))\n";
    let o = run(b, code, &quick()).await;
    assert!(o.success(), "{o:?}");
    assert_eq!(o.stdout, "Na 74.088\n");
}
