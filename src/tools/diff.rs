//! Unified diffs for the user to read before a write: line-based, 3 lines of context,
//! `patch`-compatible hunk headers, and a `\ No newline at end of file` marker.
//!
//! The edit script is a longest common subsequence over the lines between the common
//! prefix and suffix. Its table is quadratic, so past [`MAX_CELLS`] the middle is shown
//! as one replacement (still a correct diff, only a less minimal one). Pure: no I/O.

/// Largest LCS table (lines × lines of the differing middle) before falling back.
const MAX_CELLS: usize = 4_000_000;
/// Lines of unchanged context around each change.
pub const CONTEXT: usize = 3;
/// Longest diff shown, in lines; the rest is summarized.
const MAX_SHOWN_LINES: usize = 400;
/// Lines of a new file shown as its head.
const NEW_FILE_HEAD: usize = 20;

/// One step of the edit script: indices into the old and new line lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same(usize, usize),
    Delete(usize),
    Insert(usize),
}

/// Lines with their terminators, so a missing final newline is a difference.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Lines added and removed between `old` and `new`.
pub fn stat(old: &str, new: &str) -> (usize, usize) {
    let (a, b) = (lines(old), lines(new));
    script(&a, &b)
        .iter()
        .fold((0, 0), |(add, del), op| match op {
            Op::Insert(_) => (add + 1, del),
            Op::Delete(_) => (add, del + 1),
            Op::Same(..) => (add, del),
        })
}

/// The unified diff of `old` → `new` for the file shown as `path`; empty when equal.
pub fn unified(old: &str, new: &str, path: &str) -> String {
    let (a, b) = (lines(old), lines(new));
    let ops = script(&a, &b);
    let mut out = Vec::new();
    for (start, end) in hunks(&ops, CONTEXT) {
        out.push(header(&ops, start, end));
        for op in &ops[start..end] {
            let (mark, line) = match *op {
                Op::Same(i, _) => (' ', a[i]),
                Op::Delete(i) => ('-', a[i]),
                Op::Insert(j) => ('+', b[j]),
            };
            out.push(format!("{mark}{}", line.strip_suffix('\n').unwrap_or(line)));
            if !line.ends_with('\n') {
                out.push("\\ No newline at end of file".into());
            }
        }
    }
    if out.is_empty() {
        return String::new();
    }
    let mut head = vec![format!("--- a/{path}"), format!("+++ b/{path}")];
    head.extend(out);
    capped(head)
}

/// What a new file will hold: its size and its first lines as additions.
pub fn new_file(content: &str, path: &str) -> String {
    let all = lines(content);
    let mut out = vec![format!(
        "new file {path}: {} bytes, {} lines",
        content.len(),
        all.len()
    )];
    for line in all.iter().take(NEW_FILE_HEAD) {
        out.push(format!("+{}", line.strip_suffix('\n').unwrap_or(line)));
    }
    if all.len() > NEW_FILE_HEAD {
        out.push(format!("[… {} more lines]", all.len() - NEW_FILE_HEAD));
    }
    out.join("\n") + "\n"
}

fn capped(mut lines: Vec<String>) -> String {
    if lines.len() > MAX_SHOWN_LINES {
        let more = lines.len() - MAX_SHOWN_LINES;
        lines.truncate(MAX_SHOWN_LINES);
        lines.push(format!("[… {more} more diff lines not shown]"));
    }
    lines.join("\n") + "\n"
}

/// `@@ -start,count +start,count @@` for `ops[start..end]` (a 0-count range names the
/// line before it, as `diff -u` writes it).
fn header(ops: &[Op], start: usize, end: usize) -> String {
    let consumed = |o: &[Op], old: bool| {
        o.iter()
            .filter(|op| match op {
                Op::Same(..) => true,
                Op::Delete(_) => old,
                Op::Insert(_) => !old,
            })
            .count()
    };
    let range = |old: bool| {
        let before = consumed(&ops[..start], old);
        match consumed(&ops[start..end], old) {
            0 => format!("{before},0"),
            n => format!("{},{n}", before + 1),
        }
    };
    format!("@@ -{} +{} @@", range(true), range(false))
}

/// Ranges of `ops` to print: each change with `context` lines around, merged when close.
fn hunks(ops: &[Op], context: usize) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for (k, op) in ops.iter().enumerate() {
        if matches!(op, Op::Same(..)) {
            continue;
        }
        let start = k.saturating_sub(context);
        let end = (k + 1 + context).min(ops.len());
        match out.last_mut() {
            Some(last) if start <= last.1 => last.1 = end,
            _ => out.push((start, end)),
        }
    }
    out
}

/// The edit script: common prefix and suffix, then an LCS of the middle.
fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (a_mid, b_mid) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops: Vec<Op> = (0..prefix).map(|i| Op::Same(i, i)).collect();
    ops.extend(middle(a_mid, b_mid, prefix));
    let (a_end, b_end) = (a.len() - suffix, b.len() - suffix);
    ops.extend((0..suffix).map(|k| Op::Same(a_end + k, b_end + k)));
    ops
}

fn middle(a: &[&str], b: &[&str], offset: usize) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > MAX_CELLS || n == 0 || m == 0 {
        let deletes = (0..n).map(|i| Op::Delete(offset + i));
        return deletes
            .chain((0..m).map(|j| Op::Insert(offset + j)))
            .collect();
    }
    // lcs[i][j]: the LCS length of a[i..] and b[j..].
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i] == b[j] {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::with_capacity(n + m);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Same(offset + i, offset + j));
            (i, j) = (i + 1, j + 1);
        } else if j < m && (i == n || lcs[at(i, j + 1)] >= lcs[at(i + 1, j)]) {
            ops.push(Op::Insert(offset + j));
            j += 1;
        } else {
            ops.push(Op::Delete(offset + i));
            i += 1;
        }
    }
    // Deletions before insertions within a run of changes, as diff -u prints them.
    order_runs(&mut ops);
    ops
}

/// Within each run of consecutive changes, deletions first.
fn order_runs(ops: &mut [Op]) {
    let mut k = 0;
    while k < ops.len() {
        if matches!(ops[k], Op::Same(..)) {
            k += 1;
            continue;
        }
        let end = ops[k..]
            .iter()
            .position(|op| matches!(op, Op::Same(..)))
            .map_or(ops.len(), |p| k + p);
        ops[k..end].sort_by_key(|op| match *op {
            Op::Delete(i) => (0, i),
            Op::Insert(j) => (1, j),
            Op::Same(..) => (2, 0),
        });
        k = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Applies a diff made by [`unified`] to `old` (hunk positions and context checked).
    fn apply(old: &str, diff: &str) -> String {
        let a = lines(old);
        let mut out = String::new();
        let mut next = 0;
        let mut rows = diff.lines().skip(2).peekable();
        while let Some(row) = rows.next() {
            let head = row.strip_prefix("@@ -").expect(row);
            let (old_range, _) = head.split_once(' ').unwrap();
            let (start, count) = old_range.split_once(',').unwrap();
            let (start, count): (usize, usize) = (start.parse().unwrap(), count.parse().unwrap());
            let first = if count == 0 { start } else { start - 1 };
            a[next..first].iter().for_each(|l| out.push_str(l));
            next = first;
            while let Some(line) = rows.next_if(|r| !r.starts_with("@@")) {
                let eol = if rows.next_if(|r| r.starts_with('\\')).is_some() {
                    ""
                } else {
                    "\n"
                };
                let (mark, body) = line.split_at(1);
                match mark {
                    " " | "-" => {
                        assert_eq!(a[next], format!("{body}{eol}"), "{diff}");
                        next += 1;
                        if mark == " " {
                            out.push_str(&format!("{body}{eol}"));
                        }
                    }
                    "+" => out.push_str(&format!("{body}{eol}")),
                    _ => panic!("bad line {line:?}"),
                }
            }
        }
        a[next..].iter().for_each(|l| out.push_str(l));
        out
    }

    #[test]
    fn a_small_change_has_context_and_headers() {
        let old: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 5\n", "five\n");
        let d = unified(&old, &new, "src/x.txt");
        let want = "--- a/src/x.txt\n+++ b/src/x.txt\n@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n line 8\n";
        assert_eq!(d, want);
        assert_eq!(stat(&old, &new), (1, 1));
        assert_eq!(unified(&old, &old, "x"), "");
    }

    #[test]
    fn pure_inserts_and_deletes_name_the_line_before() {
        let d = unified("", "a\n", "f");
        assert!(d.contains("@@ -0,0 +1,1 @@\n+a\n"), "{d}");
        let d = unified("a\nb\n", "a\n", "f");
        assert!(d.contains("@@ -1,2 +1,1 @@\n a\n-b\n"), "{d}");
        let d = unified("a\n", "a", "f");
        assert!(d.contains("-a\n+a\n\\ No newline at end of file\n"), "{d}");
    }

    #[test]
    fn far_apart_changes_are_separate_hunks() {
        let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let new = old
            .replace("line 2\n", "two\n")
            .replace("line 28\n", "line 28b\n");
        let d = unified(&old, &new, "f");
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
        assert_eq!(apply(&old, &d), new);
    }

    #[test]
    fn a_new_file_shows_its_head_and_size() {
        let text: String = (1..=25).map(|i| format!("l{i}\n")).collect();
        let p = new_file(&text, "n.txt");
        assert!(p.starts_with(&format!(
            "new file n.txt: {} bytes, 25 lines\n+l1\n",
            text.len()
        )));
        assert!(p.contains("+l20\n[… 5 more lines]"), "{p}");
        assert!(!p.contains("l21"));
    }

    #[test]
    fn huge_middles_fall_back_to_one_replacement_and_long_diffs_are_cut() {
        let old: String = (0..3000).map(|i| format!("a{i}\n")).collect();
        let new: String = (0..3000).map(|i| format!("b{i}\n")).collect();
        assert_eq!(stat(&old, &new), (3000, 3000));
        let d = unified(&old, &new, "f");
        assert!(
            d.ends_with("[… 5603 more diff lines not shown]\n"),
            "{}",
            &d[d.len() - 80..]
        );
    }

    proptest! {
        #[test]
        fn the_diff_turns_old_into_new(
            old in proptest::collection::vec(0u8..5, 0..40),
            new in proptest::collection::vec(0u8..5, 0..40),
            old_eol in any::<bool>(),
            new_eol in any::<bool>(),
        ) {
            let text = |v: &[u8], eol: bool| {
                let mut s: String = v.iter().map(|n| format!("{n}\n")).collect();
                if !eol && s.ends_with('\n') { s.pop(); }
                s
            };
            let (old, new) = (text(&old, old_eol), text(&new, new_eol));
            let d = unified(&old, &new, "f");
            prop_assert_eq!(apply(&old, &d), new.clone());
            let (add, del) = stat(&old, &new);
            prop_assert_eq!(add, d.lines().filter(|l| l.starts_with('+') && !l.starts_with("+++")).count());
            prop_assert_eq!(del, d.lines().filter(|l| l.starts_with('-') && !l.starts_with("---")).count());
        }
    }
}
