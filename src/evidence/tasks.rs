//! Task files (`Makefile`, `*.mk`, `justfile`) cut by target: a unit per target or
//! recipe, with the comments and attributes written above it, named by its targets. A
//! question about running the tests then finds the `test:` target the way a question
//! about a function finds its definition. Pure: lines in, units out.

use super::chunk::Unit;

/// Whether `path` names a task file: `Makefile`, `GNUmakefile`, `*.mk`, `justfile` or
/// `*.just` (any case).
pub fn is_task_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    matches!(
        name.as_str(),
        "makefile" | "gnumakefile" | "justfile" | ".justfile"
    ) || name.ends_with(".mk")
        || name.ends_with(".just")
}

/// The targets a line at the margin defines: `test: tests`, `all clean:`, `@fmt:`,
/// `build target='x':`. Empty for assignments (`X := y`, `X = a:b`), comments, recipe
/// lines (indented), special targets (`.PHONY:`) and variable targets (`$(BIN):`).
pub fn targets(line: &str) -> Vec<String> {
    if line.starts_with([' ', '\t', '#', '.', '[']) {
        return Vec::new();
    }
    let Some(colon) = line.find(':') else {
        return Vec::new();
    };
    let (head, after) = (&line[..colon], &line[colon + 1..]);
    // `X = a:b`, `X := y`, `CFLAGS+=-I./a:b`: the first word is assigned, not a target.
    let mut words = head.split_whitespace();
    let assigned = words.next().is_some_and(|w| w.contains('='))
        || words.next().is_some_and(|w| w.starts_with(['=', '+', '?']))
        || after.starts_with('=');
    if assigned {
        return Vec::new();
    }
    head.split_whitespace()
        .map(|t| t.trim_start_matches('@'))
        .take_while(|t| !t.contains('='))
        .filter(|t| {
            !t.is_empty()
                && t.chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        })
        .map(str::to_string)
        .collect()
}

/// A unit per target, from the comment and attribute lines above it to the next one's;
/// the lines before the first target (variables, settings) a unit of their own.
pub fn target_units(lines: &[&str]) -> Vec<Unit> {
    let mut starts: Vec<(usize, String, String)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let names = targets(line);
        if names.is_empty() {
            continue;
        }
        let floor = starts.last().map_or(0, |s| s.0 + 1);
        let mut start = i;
        while start > floor && lines[start - 1].starts_with(['#', '[']) {
            start -= 1;
        }
        starts.push((start, line.trim_end().to_string(), names.join(" ")));
    }
    super::chunk::units_at(lines, &starts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_files_are_known_by_name() {
        for p in [
            "Makefile",
            "sub/GNUmakefile",
            "rules.mk",
            "justfile",
            "ci.just",
        ] {
            assert!(is_task_file(p), "{p}");
        }
        for p in ["Makefile.am.in.txt", "make.rs", "README"] {
            assert!(!is_task_file(p), "{p}");
        }
    }

    #[test]
    fn targets_and_not_assignments() {
        assert_eq!(targets("test: tests"), ["test"]);
        assert_eq!(targets("all clean:"), ["all", "clean"]);
        assert_eq!(targets("@fmt:"), ["fmt"]);
        assert_eq!(targets("build target='x':"), ["build"]);
        for line in [
            "LIBVERSION = 1.7.19",
            "X := y",
            "set shell := [\"bash\", \"-c\"]",
            "URL = http://example.com",
            ".PHONY: all test",
            "\t./run-tests",
            "# test: not a target",
            "[unix]",
        ] {
            assert!(targets(line).is_empty(), "{line}");
        }
    }

    #[test]
    fn a_makefile_and_a_justfile_by_target() {
        let make = "CC = gcc\n\n.PHONY: all test\n\nall: lib\n\n# Runs the suite.\ntest: all\n\t./run_tests\n";
        let units = target_units(&make.lines().collect::<Vec<_>>());
        let named: Vec<(usize, &str)> = units.iter().map(|u| (u.start, u.names.as_str())).collect();
        assert_eq!(named, [(0, ""), (4, "all"), (6, "test")]);
        let just = "default:\n    @just --list\n\n[unix]\ntest:\n    cargo nextest run\n";
        let units = target_units(&just.lines().collect::<Vec<_>>());
        let test = units.iter().find(|u| u.names == "test").unwrap();
        assert_eq!((test.start, test.end), (3, 6));
    }
}
