//! The upstream command as Windows users expect it to be found.
//!
//! Rust's `Command` on Windows finds a bare name on `PATH` only as an `.exe`, so
//! `-- npx -y some-server` would not start: `npx` and `uvx` are `.cmd` shims there.
//! The bridge looks the name up as `cmd.exe` does: each directory of `PATH` in
//! order, and in each the extensions of `PATHEXT` in order. A `.cmd` or `.bat` file
//! found this way is started by `Command` through `cmd.exe`, with each argument
//! escaped for it (Rust 1.77 and later, CVE-2024-24576), and `Command` refuses an
//! argument that it cannot escape safely rather than pass it on.
//!
//! The lookup is a pure function of the name, `PATH`, `PATHEXT` and a question "is
//! this a file": the tests run it on every system. Only Windows uses it.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// `PATHEXT` when it is not set: the value of a fresh Windows.
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// The file that `program` names on Windows, or `None` when the name is to be
/// left to `Command` as it is (it was not found: the start then fails with the
/// error of the system, naming the program).
///
/// A name with a directory in it (`C:\tools\server`, `.\server`) is looked up in
/// that directory only, as given and then with each extension of `PATHEXT`. A name
/// that already ends in one of those extensions is taken as it is in each
/// directory of `PATH`; any other name gets each extension in turn.
pub fn find_on_path(
    program: &OsStr,
    path: Option<&OsStr>,
    pathext: Option<&OsStr>,
    is_file: &dyn Fn(&Path) -> bool,
) -> Option<PathBuf> {
    let extensions = extensions(pathext);
    let name = program.to_string_lossy();
    if name.is_empty() {
        return None;
    }
    let has_extension = extensions
        .iter()
        .any(|extension| ends_with_ignoring_case(&name, extension));
    let candidates = |dir: Option<&Path>| -> Vec<PathBuf> {
        let at = |file: OsString| match dir {
            Some(dir) => dir.join(file),
            None => PathBuf::from(file),
        };
        let mut files = Vec::new();
        if has_extension || dir.is_none() {
            files.push(at(program.to_owned()));
        }
        if !has_extension {
            // Names on Windows are the same in any case: the extension is written
            // as Windows shows it (`npx.cmd`, not `npx.CMD` from `PATHEXT`).
            for extension in &extensions {
                let mut file = program.to_owned();
                file.push(extension.to_ascii_lowercase());
                files.push(at(file));
            }
        }
        files
    };
    if name.contains(['/', '\\']) || name.contains(':') {
        return candidates(None).into_iter().find(|file| is_file(file));
    }
    let path = path?.to_string_lossy().into_owned();
    path.split(';')
        .map(|dir| dir.trim().trim_matches('"'))
        .filter(|dir| !dir.is_empty())
        .flat_map(|dir| candidates(Some(Path::new(dir))))
        .find(|file| is_file(file))
}

/// The extensions of `PATHEXT`, each with its dot.
fn extensions(pathext: Option<&OsStr>) -> Vec<String> {
    let text = pathext
        .map(|value| value.to_string_lossy().into_owned())
        .filter(|value| !value.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_PATHEXT.to_owned());
    text.split(';')
        .map(str::trim)
        .filter(|extension| extension.len() > 1 && extension.starts_with('.'))
        .map(str::to_owned)
        .collect()
}

fn ends_with_ignoring_case(name: &str, extension: &str) -> bool {
    name.len() > extension.len()
        && name
            .get(name.len() - extension.len()..)
            .is_some_and(|end| end.eq_ignore_ascii_case(extension))
}

/// The program to start for the upstream command `program`: on Windows the file
/// that [`find_on_path`] finds with this process's `PATH` and `PATHEXT`, else
/// `program` as it is.
pub fn resolve(program: &OsStr) -> OsString {
    if cfg!(windows) {
        let path = std::env::var_os("PATH");
        let pathext = std::env::var_os("PATHEXT");
        if let Some(file) = find_on_path(program, path.as_deref(), pathext.as_deref(), &|file| {
            file.is_file()
        }) {
            return file.into_os_string();
        }
    }
    program.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// `find_on_path` over a set of files that exist.
    fn find(program: &str, path: &str, pathext: Option<&str>, files: &[&str]) -> Option<PathBuf> {
        let files: HashSet<PathBuf> = files.iter().map(PathBuf::from).collect();
        find_on_path(
            OsStr::new(program),
            Some(OsStr::new(path)),
            pathext.map(OsStr::new),
            &|file| files.contains(file),
        )
    }

    fn joined(dir: &str, file: &str) -> Option<PathBuf> {
        Some(Path::new(dir).join(file))
    }

    #[test]
    fn a_bare_name_finds_the_cmd_shim_of_npx_as_cmd_exe_would() {
        let node = r"C:\Program Files\nodejs";
        let path = format!(r"C:\Windows\system32;{node};C:\Users\Zoë\bin");
        let npx_cmd = Path::new(node).join("npx.cmd");
        let npx_bash = Path::new(node).join("npx");
        let files = [npx_bash.to_str().unwrap(), npx_cmd.to_str().unwrap()];
        // The file without an extension (a shell script of npm) is not a program of
        // Windows: the first extension of PATHEXT that exists wins.
        assert_eq!(find("npx", &path, None, &files), joined(node, "npx.cmd"));
        assert_eq!(
            find("npx", &path, Some(".COM;.EXE;.BAT;.CMD;.VBS"), &files),
            joined(node, "npx.cmd")
        );
    }

    #[test]
    fn the_directories_of_path_come_in_order_and_in_each_the_extensions_in_order() {
        let files = [r"B\tool.exe", r"A\tool.bat", r"A\tool.cmd", r"B\tool.com"];
        let files: Vec<String> = files.iter().map(|f| f.replace('\\', "/")).collect();
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        // The first directory that has any of the extensions, and in it the first
        // extension of PATHEXT.
        assert_eq!(find("tool", "A;B", None, &files), joined("A", "tool.bat"));
        assert_eq!(
            find("tool", "A;B", Some(".CMD;.BAT"), &files),
            joined("A", "tool.cmd")
        );
        assert_eq!(find("tool", "B;A", None, &files), joined("B", "tool.com"));
    }

    #[test]
    fn a_name_with_an_extension_of_pathext_is_taken_as_it_is_in_any_case() {
        let files = ["bin/uvx.CMD", "bin/uvx.cmd.exe"];
        assert_eq!(
            find("uvx.CMD", "bin", None, &files),
            joined("bin", "uvx.CMD")
        );
        assert_eq!(find("uvx.cmd", "other", None, &files), None);
        // `.CMD` is not in this PATHEXT: the name gets its extensions.
        assert_eq!(
            find("uvx.cmd", "bin", Some(".EXE"), &files),
            joined("bin", "uvx.cmd.exe")
        );
    }

    #[test]
    fn quoted_and_empty_entries_of_path_and_a_pathext_without_dots_are_handled() {
        let files = ["my tools/server.exe"];
        assert_eq!(
            find("server", r#";;"my tools";"#, None, &files),
            joined("my tools", "server.exe")
        );
        // An empty or unusable PATHEXT is the default one.
        assert_eq!(
            find("server", "my tools", Some(" "), &files),
            joined("my tools", "server.exe")
        );
        assert_eq!(
            find("server", "my tools", Some("EXE;;.EXE"), &files),
            joined("my tools", "server.exe")
        );
    }

    #[test]
    fn a_name_with_a_directory_is_looked_up_there_only() {
        let files = [r"C:\tools\server.cmd", "./local.bat", "bin/server.exe"];
        assert_eq!(
            find(r"C:\tools\server", "bin", None, &files),
            Some(PathBuf::from(r"C:\tools\server.cmd"))
        );
        assert_eq!(
            find("./local", "bin", None, &files),
            Some(PathBuf::from("./local.bat"))
        );
        // As given first: a file without an extension in a named directory.
        assert_eq!(
            find("bin/server.exe", "elsewhere", None, &files),
            Some(PathBuf::from("bin/server.exe"))
        );
        assert_eq!(find("./missing", "bin", None, &files), None);
    }

    /// On Windows a `.cmd` shim found by its bare name starts (as `npx` does after
    /// `--`), in a directory with a space and a non-ASCII letter, and its
    /// arguments reach it as they are: an `&` or a quote in one never runs a
    /// command of its own (CVE-2024-24576). `Command` escapes each argument for
    /// `cmd.exe`, or refuses one that it cannot escape, which is no start at all.
    #[cfg(windows)]
    #[test]
    fn on_windows_a_cmd_shim_starts_by_its_bare_name_and_its_arguments_stay_arguments() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("node tools ü");
        std::fs::create_dir(&dir).unwrap();
        // Writes its arguments, one per line, next to itself, with the quotes that
        // cmd.exe keeps around them (never unquoted: the script itself stays safe).
        std::fs::write(
            dir.join("shim.cmd"),
            "@echo off\r\n:next\r\nif [%1]==[] goto :eof\r\n>>\"%~dp0args.txt\" echo(%1\r\nshift\r\ngoto next\r\n",
        )
        .unwrap();
        let found = find_on_path(OsStr::new("shim"), Some(dir.as_os_str()), None, &|file| {
            file.is_file()
        })
        .expect("the shim is found");
        assert_eq!(found, dir.join("shim.cmd"));
        let run = |args: &[&str]| {
            std::process::Command::new(&found)
                .args(args)
                .current_dir(base.path())
                .status()
        };
        let status = run(&["-y", "a & type nul > injected-1.txt", "C:\\data dir\\ü"]).unwrap();
        assert!(status.success());
        // cmd.exe writes the text in the console's code page: read it as bytes.
        let written =
            String::from_utf8_lossy(&std::fs::read(dir.join("args.txt")).unwrap()).into_owned();
        assert!(
            written.contains("a & type nul > injected-1.txt"),
            "{written}"
        );
        assert!(!base.path().join("injected-1.txt").exists());
        // A quote that would end the quoting: escaped, or refused before a start.
        let _ = run(&["x\" & type nul > injected-2.txt & \""]);
        assert!(!base.path().join("injected-2.txt").exists());
        assert!(!dir.join("injected-2.txt").exists());
    }

    #[test]
    fn a_name_that_is_found_nowhere_is_left_to_the_system() {
        assert_eq!(find("server", "A;B", None, &[]), None);
        assert_eq!(find("", "A", None, &["A/.exe"]), None);
        let none = find_on_path(OsStr::new("server"), None, None, &|_| true);
        assert_eq!(none, None);
        // Off Windows the program is never changed.
        if !cfg!(windows) {
            assert_eq!(resolve(OsStr::new("npx")), OsString::from("npx"));
        }
    }
}
