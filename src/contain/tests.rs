use super::*;

/// Pids of live processes whose command line holds `marker`.
fn with_marker(marker: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z');
        if !zombie && String::from_utf8_lossy(&cmd).contains(marker) {
            v.push(pid);
        }
    }
    v
}

/// Waits (up to 3 s) until no process carries `marker`.
fn gone(marker: &str) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(3) {
        if with_marker(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn limits(secs: f64) -> Limits {
    Limits::with_timeout(Duration::from_secs_f64(secs))
}

#[test]
fn a_plain_command_runs_and_leaves_nothing() {
    let o = run(&Job::shell("cat; echo out; echo err >&2", "t")
        .stdin_bytes(b"in\n".to_vec())
        .limits(limits(10.0)));
    assert_eq!(o.end, End::Exited(0));
    assert_eq!(o.stdout, b"in\nout\n");
    assert_eq!(o.stderr, b"err\n");
    assert_eq!(o.leftovers, 0);
    let o = run(&Job::shell("exit 3", "t").limits(limits(10.0)));
    assert_eq!(o.end, End::Exited(3));
    let o = run(&Job::shell("kill -SEGV $$", "t").limits(limits(10.0)));
    assert_eq!(o.end, End::Signaled(11));
}

#[test]
fn a_detached_grandchild_holding_stdout_is_killed_and_counted() {
    let marker = "31.0101";
    let t0 = Instant::now();
    let o = run(
        &Job::shell(&format!("setsid sleep {marker} & echo started"), "t").limits(limits(20.0)),
    );
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
    assert_eq!(o.end, End::Exited(0));
    assert_eq!(o.stdout, b"started\n");
    assert_eq!(o.leftovers, 1, "{o:?}");
    assert!(gone(marker), "left behind: {:?}", with_marker(marker));
}

#[test]
fn a_double_forked_daemon_that_closed_its_pipes_is_still_killed() {
    let marker = "31.0202";
    let o = run(&Job::shell(
        &format!("( ( sleep {marker} >/dev/null 2>&1 </dev/null & ) & ) ; exit 0"),
        "t",
    )
    .limits(limits(20.0)));
    assert_eq!(o.end, End::Exited(0));
    assert!(o.leftovers >= 1, "{o:?}");
    assert!(gone(marker), "left behind: {:?}", with_marker(marker));
}

#[test]
fn the_deadline_holds_and_kills_the_whole_tree() {
    let marker = "31.0303";
    let t0 = Instant::now();
    let o = run(&Job::shell(
        &format!("setsid sleep {marker} & sleep {marker}; wait"),
        "t",
    )
    .limits(limits(1.0)));
    let took = t0.elapsed();
    assert_eq!(o.end, End::TimedOut);
    assert!(took < Duration::from_secs(4), "{took:?}");
    assert!(gone(marker), "left behind: {:?}", with_marker(marker));
}

#[test]
fn a_command_that_never_reads_stdin_cannot_block_the_writer() {
    let marker = "31.0404";
    let mut r = Running::spawn(
        &Job::shell(&format!("sleep {marker}"), "t")
            .stdin_pipe()
            .limits(limits(30.0)),
    )
    .unwrap();
    let t0 = Instant::now();
    let big = vec![b'x'; 4 << 20];
    assert_eq!(
        r.write_all(&big, Instant::now() + Duration::from_millis(500)),
        Err(Stop::TimedOut)
    );
    assert!(t0.elapsed() < Duration::from_secs(2));
    // Negative control: a reader that does read takes the same bytes in time.
    let mut ok = Running::spawn(&Job::shell("cat >/dev/null", "t").stdin_pipe()).unwrap();
    assert_eq!(
        ok.write_all(&big, Instant::now() + Duration::from_secs(20)),
        Ok(())
    );
    ok.close_stdin();
    assert_eq!(
        ok.wait(Instant::now() + Duration::from_secs(10)),
        Some(End::Exited(0))
    );
    drop(r);
    assert!(gone(marker));
}

#[test]
fn lines_are_read_with_a_deadline_and_a_length_limit() {
    let mut r =
        Running::spawn(&Job::shell("echo one; echo two; sleep 30.0505", "t").limits(limits(30.0)))
            .unwrap();
    let far = Instant::now() + Duration::from_secs(10);
    assert_eq!(r.read_line(100, far), Line::Text(b"one".to_vec()));
    assert_eq!(r.read_line(100, far), Line::Text(b"two".to_vec()));
    let t0 = Instant::now();
    assert_eq!(
        r.read_line(100, Instant::now() + Duration::from_millis(300)),
        Line::TimedOut
    );
    assert!(t0.elapsed() < Duration::from_secs(2));
    r.kill_all();
    let mut long = Running::spawn(&Job::shell("printf '%0300d\\n' 0", "t")).unwrap();
    assert_eq!(long.read_line(100, far), Line::TooLong);
}

#[test]
fn limits_apply_to_the_command() {
    // File size: SIGXFSZ at the cap (1 MiB), not a 2 MiB file.
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big");
    let o = run(&Job::shell("head -c 2000000 /dev/zero > \"$1\"", "t")
        .arg(&f)
        .limits(Limits {
            file_size_mb: 1,
            ..limits(10.0)
        }));
    // The shell reports its child's SIGXFSZ as exit 128 + 25.
    assert!(
        matches!(o.end, End::Signaled(libc::SIGXFSZ) | End::Exited(153)),
        "{o:?}"
    );
    assert!(std::fs::metadata(&f).unwrap().len() <= 1 << 20);
    // Negative control: the same write under the default cap.
    let o = run(&Job::shell("head -c 2000000 /dev/zero > \"$1\"", "t")
        .arg(&f)
        .limits(limits(10.0)));
    assert_eq!(o.end, End::Exited(0));
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 2_000_000);
    // CPU seconds: a busy loop is stopped by SIGXCPU/SIGKILL long before the deadline.
    let t0 = Instant::now();
    let o = run(&Job::shell("while :; do :; done", "t").limits(Limits {
        cpu_seconds: 1,
        ..limits(30.0)
    }));
    assert!(
        matches!(o.end, End::Signaled(s) if s == libc::SIGXCPU || s == libc::SIGKILL),
        "{o:?}"
    );
    assert!(t0.elapsed() < Duration::from_secs(10));
}

#[test]
fn stdout_past_its_cap_is_dropped_not_kept() {
    let o = run(&Job::shell("head -c 5000000 /dev/zero", "t")
        .stdout_cap(1000)
        .limits(limits(20.0)));
    assert_eq!(o.end, End::Exited(0));
    assert_eq!(o.stdout.len(), 1000);
    assert!(o.stdout_truncated);
}

#[test]
fn a_missing_program_is_a_spawn_failure() {
    let o = run(&Job::new("/nonexistent/adapter-31").limits(limits(5.0)));
    assert!(matches!(o.end, End::SpawnFailed(_)), "{o:?}");
}
