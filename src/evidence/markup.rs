//! XML build and project files (`pom.xml`, `*.csproj`, `*.props`, any `*.xml`) cut by
//! element: a unit per child of the root element, a long one cut again at its own
//! children (a `<build>` at its `<plugin>`s), and the root's simple settings read together
//! (`<groupId>`, `<artifactId>`, `<version>` on their lines). A unit is named by the
//! elements it sets, as a TOML section by its keys, and headed by its element path with
//! the id it carries (`project > dependencies > dependency (error_prone_annotations)`).
//! A line scanner, not a parser: a file that is not well formed is still cut, at the
//! elements it could follow. Pure: lines in, units out.

use super::chunk::{units_at, Unit, MAX_LINES};
use super::terms::{names_in, split_forms};

/// Whether `path` is chunked as XML.
pub fn is_markup(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        ext,
        "xml" | "pom" | "csproj" | "fsproj" | "vbproj" | "props" | "targets" | "xsd"
    )
}

/// One element as the scanner saw it: lines `start..=end` (0-based).
#[derive(Debug, Clone)]
struct Element {
    name: String,
    start: usize,
    end: usize,
    children: Vec<usize>,
    /// The text of an element opened and closed on one line (`<version>1.2</version>`).
    value: Option<String>,
}

impl Element {
    fn is_leaf(&self) -> bool {
        self.children.is_empty() && self.start == self.end
    }
}

/// The elements of `lines`, in document order (the first one is the root's when the file
/// has one); each knows its children.
fn elements(lines: &[&str]) -> Vec<Element> {
    let mut scan = Scanner::default();
    for (i, line) in lines.iter().enumerate() {
        scan.line(i, line);
    }
    // Elements never closed end at the last line.
    for e in std::mem::take(&mut scan.open) {
        scan.all[e].end = lines.len().saturating_sub(1);
    }
    scan.all
}

/// The scanner's state between lines.
#[derive(Default)]
struct Scanner {
    all: Vec<Element>,
    /// The elements open at this point, innermost last.
    open: Vec<usize>,
    in_comment: bool,
    /// An open tag whose `>` is on a later line (attributes over several lines).
    in_tag: bool,
}

impl Scanner {
    /// Reads line `i`.
    fn line(&mut self, i: usize, line: &str) {
        let mut rest = line;
        while !rest.is_empty() {
            let next = if self.in_comment {
                rest.find("-->").map(|at| {
                    self.in_comment = false;
                    &rest[at + 3..]
                })
            } else if self.in_tag {
                rest.find('>').map(|at| {
                    self.in_tag = false;
                    if rest[..at].ends_with('/') {
                        self.close_last(i);
                    }
                    &rest[at + 1..]
                })
            } else {
                rest.find('<').and_then(|lt| self.tag(i, &rest[lt..]))
            };
            match next {
                Some(r) => rest = r,
                None => break,
            }
        }
    }

    /// Reads the markup at `tag` (which starts with `<`) on line `i`; what follows it on
    /// the line, or `None` when the line is done.
    fn tag<'l>(&mut self, i: usize, tag: &'l str) -> Option<&'l str> {
        if let Some(after) = tag.strip_prefix("<!--") {
            self.in_comment = true;
            return Some(after);
        }
        if tag.starts_with("<?") || tag.starts_with("<!") {
            return tag.find('>').map(|at| &tag[at + 1..]);
        }
        if let Some(after) = tag.strip_prefix("</") {
            let name = tag_name(after);
            // Close up to the element of that name (a missing close tag closes too).
            if let Some(pos) = self.open.iter().rposition(|&e| self.all[e].name == name) {
                while self.open.len() > pos {
                    self.close_last(i);
                }
            }
            return after.find('>').map(|at| &after[at + 1..]);
        }
        let name = tag_name(&tag[1..]);
        if name.is_empty() {
            return Some(&tag[1..]);
        }
        let index = self.all.len();
        if let Some(&parent) = self.open.last() {
            self.all[parent].children.push(index);
        }
        self.all.push(Element {
            name: name.to_string(),
            start: i,
            end: i,
            children: Vec::new(),
            value: None,
        });
        self.open.push(index);
        let Some(at) = tag.find('>') else {
            self.in_tag = true;
            return None;
        };
        if tag[..at].ends_with('/') {
            self.close_last(i);
        } else {
            self.all[index].value = leaf_text(&tag[at + 1..], name);
        }
        Some(&tag[at + 1..])
    }

    fn close_last(&mut self, line: usize) {
        if let Some(e) = self.open.pop() {
            self.all[e].end = line;
        }
    }
}

/// The name at the start of `s` (after `<` or `</`).
fn tag_name(s: &str) -> &str {
    let end = s
        .find(|c: char| c.is_whitespace() || matches!(c, '>' | '/'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The text of `<name>text</name>` on one line, given what follows the open tag.
fn leaf_text(after: &str, name: &str) -> Option<String> {
    let close = format!("</{name}");
    let at = after.find(&close)?;
    let text = after[..at].trim();
    (!text.is_empty() && !text.contains('<')).then(|| text.chars().take(80).collect())
}

/// Child elements whose text names their parent, most telling first.
const ID_ELEMENTS: &[&str] = &["artifactId", "id", "name", "Include"];

/// The depth (the root is 1) down to which the elements a unit sets are its names: the
/// root's settings and its sections' (`<version>`, `<maven.compiler.release>` in
/// `<properties>`). Deeper, they are structure, as a YAML workflow's nested keys are:
/// every `<plugin>` and `<dependency>` sets a `<version>`, and a question about the
/// project's version is not about theirs. Those are named by their path and ids.
const SETTINGS_DEPTH: usize = 2;

/// At most this many names per unit (its path's and the elements it sets).
const MAX_NAMES: usize = 24;

/// The units of an XML file: see the module's doc. A file without a root element is
/// one plain unit; the prolog and the root's open tag go with the first unit.
pub(super) fn element_units(lines: &[&str]) -> Vec<Unit> {
    let all = elements(lines);
    let Some(root) = all.first() else {
        return units_at(lines, &[]);
    };
    let mut starts = Vec::new();
    // The root's id heads its own settings only: every unit is the root's.
    let path = [Step {
        name: &root.name,
        id: None,
    }];
    split(&all, root, &path, lines, &mut starts);
    starts.sort_by_key(|s| s.0);
    starts.dedup_by_key(|s| s.0);
    if let Some(first) = starts.first_mut() {
        first.0 = 0;
    }
    units_at(lines, &starts)
}

/// One element of a unit's path, with the id its children give it.
#[derive(Clone)]
struct Step<'a> {
    name: &'a str,
    id: Option<String>,
}

impl<'a> Step<'a> {
    fn of(e: &'a Element, all: &[Element]) -> Self {
        let id = ID_ELEMENTS.iter().find_map(|want| {
            e.children
                .iter()
                .map(|&c| &all[c])
                .find(|c| c.name == *want)
                .and_then(|c| c.value.clone())
        });
        Step { name: &e.name, id }
    }
}

/// The unit starts for the children of `parent` (whose path, itself last, is `path`): a
/// run of simple settings together, an element of at most [`MAX_LINES`] alone, a longer
/// one cut at its children.
fn split<'a>(
    all: &'a [Element],
    parent: &'a Element,
    path: &[Step<'a>],
    lines: &[&str],
    starts: &mut Vec<(usize, String, String)>,
) {
    let mut run: Vec<&Element> = Vec::new();
    let flush = |run: &mut Vec<&Element>, starts: &mut Vec<(usize, String, String)>| {
        if let Some(first) = run.first() {
            let start = with_comments_above(lines, first.start);
            let keys: Vec<&str> = match path {
                [_] => run.iter().map(|e| e.name.as_str()).collect(),
                _ => Vec::new(),
            };
            let shown = match path {
                [_] => vec![Step::of(parent, all)],
                _ => path.to_vec(),
            };
            starts.push((start, heading(&shown), names(&shown, &keys)));
        }
        run.clear();
    };
    for &c in &parent.children {
        let child = &all[c];
        if child.is_leaf() {
            run.push(child);
            continue;
        }
        flush(&mut run, starts);
        let mut own = path.to_vec();
        own.push(Step::of(child, all));
        let long = child.end - child.start + 1 > MAX_LINES && !child.children.is_empty();
        if long {
            let before = starts.len();
            split(all, child, &own, lines, starts);
            // The element's own open tag goes with its first part.
            if let Some(first) = starts.get_mut(before) {
                first.0 = with_comments_above(lines, child.start);
            }
        } else {
            let keys = if own.len() <= SETTINGS_DEPTH {
                set_inside(all, child)
            } else {
                Vec::new()
            };
            starts.push((
                with_comments_above(lines, child.start),
                heading(&own),
                names(&own, &keys),
            ));
        }
    }
    flush(&mut run, starts);
}

/// `line`, or the first of the comment lines right above it.
fn with_comments_above(lines: &[&str], line: usize) -> usize {
    let mut start = line;
    while start > 0 {
        let t = lines[start - 1].trim();
        let comment = t.starts_with("<!--") && t.ends_with("-->");
        if !comment {
            break;
        }
        start -= 1;
    }
    start
}

/// The names of the simple settings inside `e` (its leaves at any depth), in order.
fn set_inside<'a>(all: &'a [Element], e: &'a Element) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut stack: Vec<usize> = e.children.iter().rev().copied().collect();
    while let Some(i) = stack.pop() {
        let el = &all[i];
        if el.is_leaf() {
            out.push(el.name.as_str());
        }
        stack.extend(el.children.iter().rev());
    }
    out
}

/// `plugin (maven-compiler-plugin) > configuration`: the unit's element and its parent,
/// each with the id its children give it. The path above says little (every plugin is
/// under `project > build > plugins`) and would find each unit by its words.
fn heading(path: &[Step]) -> String {
    path[path.len().saturating_sub(2)..]
        .iter()
        .map(|s| match &s.id {
            Some(id) => format!("{} ({id})", s.name),
            None => s.name.to_string(),
        })
        .collect::<Vec<_>>()
        .join(" > ")
}

/// A unit's names: the elements it stands in (its own and its parent's, not the root's
/// unless the unit is the root's own settings) with their words (`devDependencies` → dev
/// dependencies), the ids on its path whole (`maven-compiler-plugin`: its words are in
/// every plugin's), and the elements it sets. Not the path above the parent: every
/// plugin of a pom is under `<build>`, and "the Maven build" is not about each plugin.
fn names(path: &[Step], keys: &[&str]) -> String {
    let inner = if path.len() > 1 { &path[1..] } else { path };
    let mut names: Vec<String> = Vec::new();
    let near = inner.len().saturating_sub(2);
    for (i, step) in inner.iter().enumerate() {
        if i >= near {
            for n in names_in(step.name)
                .into_iter()
                .chain([split_forms(step.name)])
            {
                for w in n.split_whitespace() {
                    push_new(&mut names, w);
                }
            }
        }
        if let Some(id) = &step.id {
            push_new(&mut names, id);
        }
    }
    for k in keys {
        if names.len() >= MAX_NAMES {
            break;
        }
        push_new(&mut names, k);
    }
    names.join(" ")
}

fn push_new(names: &mut Vec<String>, name: &str) {
    if !name.is_empty() && !names.iter().any(|n| n == name) {
        names.push(name.to_string());
    }
}

/// What a Maven `pom.xml` says of the project it builds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pom {
    pub group: Option<String>,
    pub artifact: Option<String>,
    pub name: Option<String>,
    pub version: Option<String>,
    pub description: Option<String>,
    /// The oldest Java the build compiles for: the lowest of the compiler settings
    /// (`maven.compiler.release`/`source`/`target` anywhere, `<release>`/`<source>`/
    /// `<target>` inside the compiler plugin), as written (`8`, `1.8`).
    pub java: Option<String>,
    /// The artifacts of the root's `<dependencies>` (not `<dependencyManagement>`'s), each
    /// with its `<scope>` when it has one (`test`, `provided`).
    pub dependencies: Vec<(String, Option<String>)>,
}

/// The [`Pom`] of `text`; `None` when its root element is not `<project>`.
pub fn read_pom(text: &str) -> Option<Pom> {
    let lines: Vec<&str> = text.lines().collect();
    let all = elements(&lines);
    let root = all.first().filter(|r| r.name == "project")?;
    let value_of = |e: &Element, name: &str| {
        e.children
            .iter()
            .map(|&c| &all[c])
            .find(|c| c.name == name)
            .and_then(|c| c.value.clone())
    };
    let child = |name: &str| value_of(root, name);
    let mut pom = Pom {
        group: child("groupId"),
        artifact: child("artifactId"),
        name: child("name"),
        version: child("version"),
        description: child("description"),
        java: None,
        dependencies: Vec::new(),
    };
    for list in root.children.iter().map(|&c| &all[c]) {
        if list.name != "dependencies" {
            continue;
        }
        for dep in list.children.iter().map(|&c| &all[c]) {
            if let Some(artifact) = value_of(dep, "artifactId").filter(|_| dep.name == "dependency")
            {
                pom.dependencies.push((artifact, value_of(dep, "scope")));
            }
        }
    }
    let mut parents: Vec<Option<usize>> = vec![None; all.len()];
    for (i, e) in all.iter().enumerate() {
        for &c in &e.children {
            parents[c] = Some(i);
        }
    }
    let in_compiler = |mut i: usize| {
        while let Some(p) = parents[i] {
            if all[p].name == "plugin"
                && Step::of(&all[p], &all).id.as_deref() == Some("maven-compiler-plugin")
            {
                return true;
            }
            i = p;
        }
        false
    };
    let javas = all.iter().enumerate().filter_map(|(i, e)| {
        let value = e.value.as_deref()?;
        let setting = matches!(
            e.name.as_str(),
            "maven.compiler.release" | "maven.compiler.source" | "maven.compiler.target"
        ) || (matches!(e.name.as_str(), "release" | "source" | "target")
            && in_compiler(i));
        let major = java_major(value)?;
        setting.then(|| (major, value.to_string()))
    });
    pom.java = javas.min_by_key(|(major, _)| *major).map(|(_, v)| v);
    Some(pom)
}

/// `8` for `8` and `1.8`, `11` for `11`; `None` for what is no version (`${java.version}`).
fn java_major(value: &str) -> Option<u32> {
    let v = value.trim();
    let v = v.strip_prefix("1.").unwrap_or(v);
    v.split('.').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const POM: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.example</groupId>
  <artifactId>demo</artifactId>
  <version>2.4.1-SNAPSHOT</version><!-- bump on release -->
  <properties>
    <maven.compiler.release>8</maven.compiler.release>
  </properties>
  <!-- What the library needs at run time -->
  <dependencies>
    <dependency>
      <groupId>com.google.errorprone</groupId>
      <artifactId>error_prone_annotations</artifactId>
      <version>2.30.0</version>
    </dependency>
    <empty/>
  </dependencies>
</project>
"#;

    fn units(text: &str) -> Vec<(usize, usize, String, String)> {
        let lines: Vec<&str> = text.lines().collect();
        element_units(&lines)
            .into_iter()
            .map(|u| (u.start + 1, u.end, u.heading, u.names))
            .collect()
    }

    #[test]
    fn a_pom_is_cut_at_the_root_elements_children() {
        let u = units(POM);
        // The settings with the prolog and the root's open tag (the namespace names the
        // format: maven), then properties, dependencies.
        let settings = &u[0];
        assert_eq!((settings.0, settings.1), (1, 7));
        assert_eq!(
            settings.2, "project (demo)",
            "headed by the artifact it builds"
        );
        assert_eq!(
            settings.3,
            "project demo modelVersion groupId artifactId version"
        );
        let props = u.iter().find(|u| u.2 == "project > properties").unwrap();
        assert_eq!(props.3, "properties maven.compiler.release");
        let deps = u.iter().find(|u| u.2.contains("dependencies")).unwrap();
        assert_eq!(deps.0, 11, "the comment above goes with it");
        assert!(deps.3.starts_with("dependencies"), "{}", deps.3);
        assert!(deps.3.contains("artifactId"), "{}", deps.3);
    }

    #[test]
    fn a_long_element_is_cut_at_its_children_with_their_ids() {
        let plugin = |id: &str| {
            let body: String = (0..30)
                .map(|i| format!("          <arg>-X{i}</arg>\n"))
                .collect();
            format!("      <plugin>\n        <artifactId>{id}</artifactId>\n        <configuration>\n{body}        </configuration>\n      </plugin>\n")
        };
        let xml = format!(
            "<project>\n  <build>\n    <plugins>\n{}{}    </plugins>\n  </build>\n</project>\n",
            plugin("compiler"),
            plugin("surefire")
        );
        let u = units(&xml);
        let heads: Vec<&str> = u.iter().map(|u| u.2.as_str()).collect();
        assert!(heads.contains(&"plugins > plugin (compiler)"), "{heads:?}");
        assert!(heads.contains(&"plugins > plugin (surefire)"), "{heads:?}");
        let first = u.iter().find(|u| u.2.ends_with("(compiler)")).unwrap();
        assert_eq!(first.0, 1, "the open tags above go with the first plugin");
        assert_eq!(first.3, "plugins plugin compiler", "{}", first.3);
    }

    #[test]
    fn what_is_not_well_formed_is_still_cut() {
        assert!(units("").is_empty());
        assert_eq!(units("no markup here\nat all\n").len(), 1);
        // An element never closed, a stray close tag, an unterminated comment.
        let bad = "<root>\n  <a>1</a>\n  </b>\n  <c>\n    <d>2</d>\n<!-- never ends\n";
        let u = units(bad);
        assert!(!u.is_empty());
        assert_eq!(u.last().unwrap().1, 6, "every line is in a unit");
        assert_eq!(tag_name("a b='1'>"), "a");
        assert_eq!(
            leaf_text("<x>1</x></v>", "v"),
            None,
            "an element's children are no text"
        );
        assert_eq!(leaf_text("1.2</v>", "v"), Some("1.2".into()));
        assert!(is_markup("pom.xml") && is_markup("src/App.csproj") && !is_markup("a.html"));
    }

    #[test]
    fn a_pom_says_its_coordinates_and_its_oldest_java() {
        let pom = read_pom(POM).unwrap();
        assert_eq!(pom.artifact.as_deref(), Some("demo"));
        assert_eq!(pom.version.as_deref(), Some("2.4.1-SNAPSHOT"));
        assert_eq!(pom.java.as_deref(), Some("8"));
        // The compiler plugin's own settings, the lowest of them; other plugins' not.
        let plugin = "<project>\n  <build><plugins>\n    <plugin>\n      <artifactId>maven-compiler-plugin</artifactId>\n      <configuration><source>11</source></configuration>\n      <executions><execution><configuration>\n        <release>1.8</release>\n      </configuration></execution></executions>\n    </plugin>\n    <plugin>\n      <artifactId>other</artifactId>\n      <configuration><release>6</release></configuration>\n    </plugin>\n  </plugins></build>\n</project>\n";
        assert_eq!(read_pom(plugin).unwrap().java.as_deref(), Some("1.8"));
        assert_eq!(read_pom("<settings><version>1</version></settings>"), None);
        assert_eq!(java_major("${java.version}"), None);
    }
}
