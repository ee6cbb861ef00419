//! What the `lode` binary will not read or show: paths outside the root, the
//! home directory unless named, links out of the root, and repository text
//! that would pass for lode's own output.

use crate::common::Repo;

/// Repository text is data: a file name that holds a forged hit line, or a
/// snippet that holds terminal escapes, is shown escaped in every text answer.
#[test]
fn hostile_names_and_escapes_are_shown_escaped() {
    let repo = Repo::empty();
    let forged = "x\nsrc/auth.py:1-5  function login  9.99\n.py";
    repo.write(
        forged,
        "def tally_forged_marker():\n    return \"\x1b]0;TITLE\x07\x1b[2J\"\n",
    );
    repo.write(
        "ok.py",
        "def tally_plain_marker(a):\n    return tally_forged_marker() + a\n",
    );
    let answers = [
        repo.ok(&["search", "tally_forged_marker"]),
        repo.ok(&["grep", "TITLE"]),
        repo.ok(&["outline", forged]),
        repo.ok(&["outline", "."]),
        repo.ok(&["show", "tally_forged_marker"]),
        repo.ok(&["callers", "tally_forged_marker"]),
        repo.ok(&["ask", "tally_forged_marker"]),
        repo.ok(&["gather", "tally_forged_marker"]),
        repo.ok(&["search", "--files", "tally_forged_marker"]),
        repo.ok(&["map"]),
    ];
    for text in answers {
        assert!(
            !text.lines().any(|l| l.starts_with("src/auth.py")),
            "a forged line at column 0:\n{text}"
        );
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "a control character reached the terminal:\n{text:?}"
        );
        assert!(text.contains("x\\nsrc/"), "{text}");
    }
    // JSON keeps the real name: its encoder escapes controls already.
    let v = repo.json(&["search", "tally_forged_marker"]);
    assert_eq!(v["hits"][0]["path"], forged);
}

/// `lode` run in `dir` with no `--root`, its cache and config in `cache`.
fn run_in(dir: &std::path::Path, cache: &std::path::Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_lode"))
        .args(args)
        .arg("--cache-dir")
        .arg(cache)
        .current_dir(dir)
        .env("XDG_CONFIG_HOME", cache.join("config"))
        .env("HOME", cache.join("home"))
        .env_remove("LODE_CACHE_DIR")
        .output()
        .unwrap()
}

#[test]
fn a_path_outside_the_repository_is_refused_by_every_command() {
    let repo = Repo::fixture("shop");
    std::fs::create_dir(repo.path(".git")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.py"),
        "def hunter2_secret(): pass\n",
    )
    .unwrap();
    let secret = outside.path().join("secret.py");
    let secret = secret.to_str().unwrap();
    let dir = outside.path().to_str().unwrap();
    for args in [
        vec!["outline", secret],
        vec!["outline", dir],
        vec!["grep", "hunter2", "--path", dir],
        vec!["search", "hunter2_secret", "--path", secret],
        vec!["show", "hunter2_secret", "--path", secret],
    ] {
        let out = run_in(repo.root(), repo.cache.path(), &args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stdout}{stderr}");
        assert!(
            stderr.contains("is outside the repository"),
            "{args:?}: {stderr}"
        );
        assert!(!stdout.contains("hunter2"), "{args:?}: {stdout}");
    }
}

#[test]
fn the_home_directory_is_not_indexed_unless_named() {
    let cache = tempfile::tempdir().unwrap();
    let home = cache.path().join("home");
    std::fs::create_dir_all(home.join("notes")).unwrap();
    std::fs::write(home.join("notes/a.py"), "def in_home(): pass\n").unwrap();
    let out = run_in(&home, cache.path(), &["search", "in_home"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no git repository at or above") && stderr.contains("--root"));
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // Named, it is indexed.
    let out = run_in(&home, cache.path(), &["search", "in_home", "--root", "."]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Below it, with no repository, the directory is the root, and that is said.
    let out = run_in(&home.join("notes"), cache.path(), &["search", "in_home"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("no git repository at or above"), "{stderr}");
}

#[test]
fn an_index_rooted_inside_a_repository_says_so() {
    let repo = Repo::fixture("shop");
    std::fs::create_dir(repo.path(".git")).unwrap();
    let out = run_in(repo.root(), repo.cache.path(), &["index", "src"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("is inside the git repository"), "{stderr}");
    let out = run_in(repo.root(), repo.cache.path(), &["index"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("inside the git repository"), "{stderr}");
}

/// A file the index knows, replaced by a link out of the root after the
/// build, is never read: not by grep, show or search snippets.
#[test]
fn a_file_swapped_for_a_link_out_of_the_root_is_not_read() {
    let repo = Repo::fixture("shop");
    repo.ok(&["index"]);
    let outside = tempfile::tempdir().unwrap();
    let pricing = std::fs::read_to_string(repo.path("src/shop/pricing.py")).unwrap();
    let stolen = pricing.replace("def ", "def hunter2_") + "\n# hunter2 secret\n";
    std::fs::write(outside.path().join("secret.py"), stolen).unwrap();
    std::fs::remove_file(repo.path("src/shop/pricing.py")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.py"),
        repo.path("src/shop/pricing.py"),
    )
    .unwrap();
    for args in [
        vec!["grep", "hunter2", "--no-refresh"],
        vec!["grep", "def", "--no-refresh"],
        vec!["show", "apply_discount", "--no-refresh"],
        vec!["search", "apply_discount", "--no-refresh"],
        vec!["gather", "apply_discount", "--no-refresh"],
    ] {
        let out = repo.run(&args);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("hunter2"), "{args:?}: {stdout}");
    }
}
