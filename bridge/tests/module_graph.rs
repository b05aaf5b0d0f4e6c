//! The module graph of `bridge/src`: no import circle between its folders, and no
//! import that breaks the layer rules (docs/architecture.md). The graph is read
//! from the source text: every `use` and every path that starts with `crate`,
//! `super` or `self` names a module, and its first segment below the crate root is
//! the folder (or top-level file) it lives in. Comments and strings do not count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Imports that must not exist: (importer, imported, why). A module is a folder of
/// `bridge/src` or a file at its top, by name.
const FORBIDDEN: &[(&str, &[&str], &str)] = &[
    (
        "wire",
        &[ANY],
        "wire is the ground: JSON-RPC frames and lines, it imports nothing above it",
    ),
    (
        "catalogue",
        &[ANY],
        "the catalogue of what the user sees is a leaf: every layer maps its events to \
         its entries",
    ),
    (
        "net",
        &[ANY],
        "the network pieces are a leaf that the HTTP link and the sign-in share",
    ),
    (
        "auth",
        &[
            "upstream", "session", "rules", "client", "notify", "serve", "run", "cli",
        ],
        "the sign-in is a leaf of the HTTP link: handed its client and VS Code's side, \
         it reports through its own types",
    ),
    (
        "rules",
        &["session", "upstream", "client", "auth"],
        "the rules are pure translation: no session, no link, no I/O",
    ),
    (
        "upstream",
        &["session"],
        "the upstream link serves the session and never knows it",
    ),
    (
        "client",
        &["session"],
        "VS Code's side serves the session and never knows it",
    ),
    (
        "notify",
        &["session"],
        "the listen machine returns actions that the session carries out",
    ),
    (
        "session",
        &["serve", "run", "cli"],
        "the session never imports what runs it",
    ),
    (
        ANY,
        &[CRATE_ROOT, "internals"],
        "the crate root and internals re-export for users and tests, never for the layers",
    ),
];

/// Modules that only the named modules may import: (imported, importers, why).
const ONLY_IMPORTED_BY: &[(&str, &[&str], &str)] = &[(
    "doctor",
    &["cli"],
    "doctor runs the layers against an upstream for the command line; no layer depends on it",
)];

/// Any module, in [`FORBIDDEN`].
const ANY: &str = "*";

/// The node of `lib.rs`, whose items other modules could reach as `crate::Name`.
const CRATE_ROOT: &str = "crate root";

/// Imports that close a circle and are allowed for now, each with its reason. An
/// entry that no longer matches an import fails the test, so that it goes.
const KNOWN_KNOTS: &[(&str, &str, &str)] = &[];

/// Folders whose files import one way: no circle between two of their files.
const ONE_WAY_FOLDERS: &[&str] = &["wire"];

/// One import: where it is written and what it names.
#[derive(Debug, Clone)]
struct Import {
    /// The file, relative to `bridge/src`.
    file: String,
    /// The module path of the file (with its inline modules) that writes it.
    from: Vec<String>,
    /// The path as written, for the messages.
    written: String,
    /// The absolute path below the crate root.
    target: Vec<String>,
}

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file below `root`, with its module path (`session/mod.rs` is
/// `["session"]`, `lib.rs` is `[]`). `main.rs` is a crate of its own (it reaches the
/// library by its name), so it is left out.
fn source_files(root: &Path) -> Vec<(String, Vec<String>)> {
    let mut files = Vec::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if relative == "main.rs" {
                continue;
            }
            let mut module: Vec<String> = relative
                .trim_end_matches(".rs")
                .split('/')
                .map(str::to_owned)
                .collect();
            if module
                .last()
                .is_some_and(|last| last == "mod" || last == "lib")
            {
                module.pop();
            }
            files.push((relative, module));
        }
    }
    files.sort();
    files
}

/// The source without comments, string and character literals (each replaced by a
/// space), so that a path in a doc comment or a log line is not an import.
fn code_of(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut code = String::with_capacity(source.len());
    let mut at = 0;
    let next = |at: usize| chars.get(at).copied().unwrap_or('\0');
    while at < chars.len() {
        let c = chars[at];
        if c == '/' && next(at + 1) == '/' {
            while at < chars.len() && chars[at] != '\n' {
                at += 1;
            }
        } else if c == '/' && next(at + 1) == '*' {
            let mut depth = 0;
            while at < chars.len() {
                if chars[at] == '/' && next(at + 1) == '*' {
                    depth += 1;
                    at += 2;
                } else if chars[at] == '*' && next(at + 1) == '/' {
                    depth -= 1;
                    at += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    at += 1;
                }
            }
            code.push(' ');
        } else if c == '"' || (matches!(c, 'r' | 'b') && is_raw_string_start(&chars, at)) {
            at = end_of_string(&chars, at);
            code.push(' ');
        } else if c == '\'' && next(at + 1) == '\\' {
            // An escaped character: up to the closing quote.
            at += 2;
            while at < chars.len() && chars[at] != '\'' {
                at += 1;
            }
            at += 1;
            code.push(' ');
        } else if c == '\'' && next(at + 2) == '\'' {
            at += 3;
            code.push(' ');
        } else {
            // A lifetime's quote, or code.
            code.push(c);
            at += 1;
        }
    }
    code
}

/// Whether a raw or byte string starts at `at` (`r"`, `r#"`, `b"`, `br#"`), and not
/// an identifier that ends in `r` or `b`.
fn is_raw_string_start(chars: &[char], at: usize) -> bool {
    if at > 0 && (chars[at - 1].is_alphanumeric() || chars[at - 1] == '_') {
        return false;
    }
    let mut i = at;
    if chars.get(i) == Some(&'b') {
        i += 1;
    }
    if chars.get(i) == Some(&'r') {
        i += 1;
        while chars.get(i) == Some(&'#') {
            i += 1;
        }
    }
    i > at && chars.get(i) == Some(&'"')
}

/// The position after the string literal that starts at `at`.
fn end_of_string(chars: &[char], mut at: usize) -> usize {
    let mut raw = false;
    while chars[at] != '"' {
        raw |= chars[at] == 'r';
        at += 1;
    }
    let hashes = if raw {
        chars[..at].iter().rev().take_while(|&&c| c == '#').count()
    } else {
        0
    };
    at += 1;
    while at < chars.len() {
        match chars[at] {
            '\\' if !raw => at += 2,
            '"' if chars[at + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes =>
            {
                return at + 1 + hashes;
            }
            _ => at += 1,
        }
    }
    at
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    PathSep,
    Punct(char),
}

fn tokens_of(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let c = chars[at];
        if c.is_alphanumeric() || c == '_' {
            let start = at;
            while at < chars.len() && (chars[at].is_alphanumeric() || chars[at] == '_') {
                at += 1;
            }
            tokens.push(Token::Word(chars[start..at].iter().collect()));
        } else if c == ':' && chars.get(at + 1) == Some(&':') {
            tokens.push(Token::PathSep);
            at += 2;
        } else {
            if !c.is_whitespace() {
                tokens.push(Token::Punct(c));
            }
            at += 1;
        }
    }
    tokens
}

/// The paths of one `use` tree, starting at `tokens[at]`, flattened (`a::{b, c::d}`
/// is `a::b` and `a::c::d`; `self` in a group names the group's module). Returns
/// the position after the tree.
fn use_tree(
    tokens: &[Token],
    mut at: usize,
    prefix: &[String],
    out: &mut Vec<Vec<String>>,
) -> usize {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(at) {
            Some(Token::Word(word)) if word == "as" => {
                at += 2;
                out.push(path);
                return at;
            }
            Some(Token::Word(word)) => {
                if word != "self" || path.is_empty() {
                    path.push(word.clone());
                }
                at += 1;
            }
            Some(Token::PathSep) => at += 1,
            Some(Token::Punct('{')) => {
                at += 1;
                while tokens.get(at) != Some(&Token::Punct('}')) && at < tokens.len() {
                    at = use_tree(tokens, at, &path, out);
                    if tokens.get(at) == Some(&Token::Punct(',')) {
                        at += 1;
                    }
                }
                return at + 1;
            }
            Some(Token::Punct('*')) => {
                out.push(path);
                return at + 1;
            }
            _ => {
                out.push(path);
                return at;
            }
        }
    }
}

/// The module paths written in one file: its `use` trees and the paths in its code
/// that start with `crate`, `super` or `self`, each resolved against the module
/// that writes it (inline modules such as `mod tests { ... }` count).
fn imports_of(file: &str, module: &[String], source: &str) -> Vec<Import> {
    let tokens = tokens_of(&code_of(source));
    let mut imports = Vec::new();
    // The inline modules that are open, with the brace depth inside each.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut at = 0;
    let current = |inline: &[(String, usize)]| {
        let mut path = module.to_vec();
        path.extend(inline.iter().map(|(name, _)| name.clone()));
        path
    };
    while at < tokens.len() {
        match &tokens[at] {
            Token::Punct('{') => depth += 1,
            Token::Punct('}') => {
                if inline.last().is_some_and(|(_, inside)| *inside == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            Token::Word(word) if word == "mod" => {
                if let (Some(Token::Word(name)), Some(Token::Punct('{'))) =
                    (tokens.get(at + 1), tokens.get(at + 2))
                {
                    inline.push((name.clone(), depth + 1));
                }
            }
            Token::Word(word) if word == "use" => {
                let mut paths = Vec::new();
                let end = use_tree(&tokens, at + 1, &[], &mut paths);
                let from = current(&inline);
                for path in paths {
                    if let Some(target) = resolve(&from, &path, true) {
                        imports.push(Import {
                            file: file.to_owned(),
                            from: from.clone(),
                            written: path.join("::"),
                            target,
                        });
                    }
                }
                at = end;
                continue;
            }
            Token::Word(word)
                if matches!(word.as_str(), "crate" | "super" | "self")
                    && tokens.get(at + 1) == Some(&Token::PathSep)
                    && (at == 0 || tokens[at - 1] != Token::PathSep) =>
            {
                let mut path = Vec::new();
                while let Some(Token::Word(segment)) = tokens.get(at) {
                    path.push(segment.clone());
                    if tokens.get(at + 1) != Some(&Token::PathSep) {
                        break;
                    }
                    at += 2;
                }
                let from = current(&inline);
                if let Some(target) = resolve(&from, &path, false) {
                    imports.push(Import {
                        file: file.to_owned(),
                        from,
                        written: path.join("::"),
                        target,
                    });
                }
            }
            _ => {}
        }
        at += 1;
    }
    imports
}

/// The absolute path below the crate root of `path`, written in module `from`:
/// `None` for a path into another crate (a `use` of `serde_json::Value`) or a name
/// in scope.
fn resolve(from: &[String], path: &[String], in_use: bool) -> Option<Vec<String>> {
    let (first, rest) = path.split_first()?;
    match first.as_str() {
        "crate" => Some(rest.to_vec()),
        "self" => Some(from.iter().chain(rest).cloned().collect()),
        "super" => {
            let ups = 1 + rest
                .iter()
                .take_while(|segment| *segment == "super")
                .count();
            let base = from.get(..from.len().checked_sub(ups)?)?;
            Some(base.iter().chain(&rest[ups - 1..]).cloned().collect())
        }
        // A `use` of a child module of the crate root reaches a top-level module;
        // below the root a bare first segment is a child of the same folder, or
        // another crate.
        _ if in_use && from.is_empty() => Some(path.to_vec()),
        _ => None,
    }
}

/// The folder (or top-level file) of a module path: its first segment, or the
/// crate root for an item of `lib.rs` itself.
fn node_of(path: &[String], top_level: &BTreeSet<String>) -> String {
    match path.first() {
        Some(first) if top_level.contains(first) => first.clone(),
        _ => CRATE_ROOT.to_owned(),
    }
}

/// Every import of `bridge/src` between two different nodes: (importer, imported).
fn graph() -> (Vec<(String, String, Import)>, Vec<Import>) {
    let root = source_root();
    let files = source_files(&root);
    let top_level: BTreeSet<String> = files
        .iter()
        .filter_map(|(_, module)| module.first().cloned())
        .collect();
    let mut all = Vec::new();
    let mut edges = Vec::new();
    for (file, module) in &files {
        let source = std::fs::read_to_string(root.join(file)).unwrap();
        for import in imports_of(file, module, &source) {
            let from = node_of(&import.from, &top_level);
            let to = node_of(&import.target, &top_level);
            if import.target.is_empty() {
                // A glob of the crate root (`use super::*` in lib.rs's tests).
                continue;
            }
            if from != to {
                edges.push((from, to, import.clone()));
            }
            all.push(import);
        }
    }
    (edges, all)
}

/// The groups of nodes that reach each other: each circle once, its nodes sorted.
fn circles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let nodes: BTreeSet<&String> = edges
        .iter()
        .flat_map(|(from, tos)| std::iter::once(from).chain(tos))
        .collect();
    let reach = |start: &String| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![start.clone()];
        while let Some(node) = todo.pop() {
            for next in edges.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|node| (*node, reach(node))).collect();
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for node in &nodes {
        if !reached[node].contains(*node) {
            continue;
        }
        let circle: BTreeSet<String> = reached[node]
            .iter()
            .filter(|other| reached[other].contains(*node))
            .cloned()
            .collect();
        if !found.contains(&circle) {
            found.push(circle);
        }
    }
    found
}

fn describe(import: &Import) -> String {
    format!("{}: {}", import.file, import.written)
}

#[test]
fn no_import_breaks_the_layer_rules() {
    let (edges, all) = graph();
    assert!(
        all.len() > 150 && edges.len() > 60,
        "the reader found {} imports, {} between folders: too few, it reads the source wrong",
        all.len(),
        edges.len()
    );
    let mut broken = Vec::new();
    for (from, to, import) in &edges {
        for (importer, imported, why) in FORBIDDEN {
            if (*importer == ANY || importer == from)
                && (imported.contains(&ANY) || imported.contains(&to.as_str()))
            {
                broken.push(format!("{from} imports {to} ({}): {why}", describe(import)));
            }
        }
    }
    for (imported, importers, why) in ONLY_IMPORTED_BY {
        let into: Vec<_> = edges.iter().filter(|(_, to, _)| to == imported).collect();
        assert!(
            !into.is_empty(),
            "nothing imports {imported}: the rule reads nothing"
        );
        for (from, to, import) in into {
            if !importers.contains(&from.as_str()) {
                broken.push(format!("{from} imports {to} ({}): {why}", describe(import)));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "imports against the layer rules:\n{}",
        broken.join("\n")
    );
}

#[test]
fn no_import_circle_between_folders() {
    let (edges, _) = graph();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut examples: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for (from, to, import) in &edges {
        examples
            .entry((from.clone(), to.clone()))
            .or_default()
            .push(describe(import));
        let known = KNOWN_KNOTS.iter().any(|(a, b, _)| a == from && b == to);
        if !known {
            graph.entry(from.clone()).or_default().insert(to.clone());
        }
    }
    let gone: Vec<_> = KNOWN_KNOTS
        .iter()
        .filter(|(a, b, _)| !examples.contains_key(&(a.to_string(), b.to_string())))
        .collect();
    assert!(
        gone.is_empty(),
        "these known knots are gone, remove them from KNOWN_KNOTS: {gone:?}"
    );
    let found = circles(&graph);
    let mut message = String::new();
    for circle in &found {
        message.push_str(&format!("circle {circle:?}:\n"));
        for ((from, to), imports) in &examples {
            if circle.contains(from)
                && circle.contains(to)
                && graph.get(from).is_some_and(|tos| tos.contains(to))
            {
                message.push_str(&format!("  {from} -> {to}: {}\n", imports.join(", ")));
            }
        }
    }
    assert!(
        found.is_empty(),
        "import circles between the folders of bridge/src:\n{message}"
    );
}

#[test]
fn the_files_of_the_ground_folders_import_one_way() {
    let root = source_root();
    let files = source_files(&root);
    let modules: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|(file, module)| (module.clone(), file.clone()))
        .collect();
    // The file that defines an absolute module path: its longest prefix that is a file.
    let file_of = |path: &[String]| {
        (1..=path.len())
            .rev()
            .find_map(|length| modules.get(&path[..length]).cloned())
    };
    for folder in ONE_WAY_FOLDERS {
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut examples = Vec::new();
        for (file, module) in &files {
            if module.first().map(String::as_str) != Some(*folder) || file.ends_with("mod.rs") {
                continue;
            }
            let source = std::fs::read_to_string(root.join(file)).unwrap();
            for import in imports_of(file, module, &source) {
                // A unit test may use a neighbour to build its input.
                if import.from.len() > module.len() {
                    continue;
                }
                if let Some(target) = file_of(&import.target)
                    .filter(|target| target != file && !target.ends_with("mod.rs"))
                {
                    examples.push(format!("{} -> {target}: {}", file, import.written));
                    graph.entry(file.clone()).or_default().insert(target);
                }
            }
        }
        let found = circles(&graph);
        assert!(
            found.is_empty(),
            "circles between the files of {folder}/: {found:?}\n{}",
            examples.join("\n")
        );
    }
}

#[test]
fn the_reader_resolves_use_trees_and_paths() {
    let source = r##"
        //! Docs name crate::serve, which is no import.
        use crate::{wire::{self, frame::Message}, log::emit as write_line};
        use super::sibling::*;
        use serde_json::Value;
        fn f<'a>(x: &'a str) -> char {
            let _ = "crate::upstream::Outgoing";
            let _ = r#"crate::auth"#;
            crate::log::emit!(RequestInfo: crate::rules::input::url_is_safe(x));
            '"'
        }
        #[cfg(test)]
        mod tests {
            use super::*;
            use super::super::notify::events;
        }
    "##;
    let module = vec!["session".to_owned(), "stop".to_owned()];
    let found: Vec<String> = imports_of("session/stop.rs", &module, source)
        .iter()
        .map(|import| import.target.join("::"))
        .collect();
    assert_eq!(
        found,
        [
            "wire",
            "wire::frame::Message",
            "log::emit",
            "session::sibling",
            "log::emit",
            "rules::input::url_is_safe",
            "session::stop",
            "session::notify::events",
        ]
    );
}
