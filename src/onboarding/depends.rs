//! The direct dependencies a manifest declares, by name, for the project fact: what the
//! project uses and what only its development and tests use. "Which library does it use to
//! parse flags?" is then answered from the manifest's list, with the manifest named.

use crate::evidence::markup::Pom;
use crate::memory::Draft;

/// Most names listed per kind; the rest are counted.
const MAX_NAMES: usize = 24;

/// Direct dependencies: `(used by the project, used only to develop and test it)`.
#[derive(Debug, Default, PartialEq)]
pub struct Depends {
    pub uses: Vec<String>,
    pub dev: Vec<String>,
}

/// `fact` with its manifest's dependencies appended, when it declares any.
pub fn with(mut fact: Draft, depends: Depends) -> Draft {
    let list = |names: &[String]| {
        let mut shown = names
            .iter()
            .take(MAX_NAMES)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if names.len() > MAX_NAMES {
            shown.push_str(&format!(" and {} more", names.len() - MAX_NAMES));
        }
        shown
    };
    if !depends.uses.is_empty() {
        fact.summary
            .push_str(&format!(". Depends on: {}", list(&depends.uses)));
    }
    if !depends.dev.is_empty() {
        fact.summary.push_str(&format!(
            ". Development and test dependencies: {}",
            list(&depends.dev)
        ));
    }
    fact
}

/// `[dependencies]` (also per target) and `[build-dependencies]`; `[dev-dependencies]`.
pub fn cargo(manifest: &toml::Table) -> Depends {
    let keys = |table: Option<&toml::Value>| -> Vec<String> {
        table
            .and_then(|t| t.as_table())
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut uses = keys(manifest.get("dependencies"));
    let mut dev = keys(manifest.get("dev-dependencies"));
    if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
        for target in targets.values() {
            uses.extend(keys(target.get("dependencies")));
            dev.extend(keys(target.get("dev-dependencies")));
        }
    }
    uses.extend(keys(manifest.get("build-dependencies")));
    Depends {
        uses: distinct(uses),
        dev: distinct(dev),
    }
}

/// `project.dependencies`; the optional dependencies and the dependency groups.
pub fn pyproject(manifest: &toml::Table) -> Depends {
    let names = |list: Option<&toml::Value>| -> Vec<String> {
        list.and_then(|l| l.as_array())
            .map(|items| {
                items
                    .iter()
                    .filter_map(|i| i.as_str())
                    .filter_map(requirement_name)
                    .collect()
            })
            .unwrap_or_default()
    };
    let project = manifest.get("project");
    let uses = names(project.and_then(|p| p.get("dependencies")));
    let mut dev = Vec::new();
    let groups = [
        project.and_then(|p| p.get("optional-dependencies")),
        manifest.get("dependency-groups"),
    ];
    for table in groups.into_iter().flatten().filter_map(|g| g.as_table()) {
        for list in table.values() {
            dev.extend(names(Some(list)));
        }
    }
    Depends {
        uses: distinct(uses),
        dev: distinct(dev),
    }
}

/// The name of a PEP 508 requirement (`requests[socks]>=2.0; python_version<"3.8"` →
/// `requests`).
fn requirement_name(requirement: &str) -> Option<String> {
    let name: String = requirement
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        .collect();
    (!name.is_empty()).then_some(name)
}

/// `dependencies` and `peerDependencies`; `devDependencies`.
pub fn package_json(manifest: &serde_json::Value) -> Depends {
    let keys = |key: &str| -> Vec<String> {
        manifest[key]
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut uses = keys("dependencies");
    uses.extend(keys("peerDependencies"));
    Depends {
        uses: distinct(uses),
        dev: distinct(keys("devDependencies")),
    }
}

/// The modules `go.mod` requires directly (an `// indirect` one is left out). Go keeps
/// test-only modules in the same list.
pub fn go_mod(text: &str) -> Depends {
    let mut uses = Vec::new();
    let mut in_block = false;
    for line in text.lines().map(str::trim) {
        let entry = if in_block {
            if line.starts_with(')') {
                in_block = false;
                continue;
            }
            line
        } else if let Some(rest) = line.strip_prefix("require") {
            let rest = rest.trim();
            if rest.starts_with('(') {
                in_block = true;
                continue;
            }
            rest
        } else {
            continue;
        };
        if entry.contains("// indirect") {
            continue;
        }
        if let Some(module) = entry
            .split_whitespace()
            .next()
            .filter(|m| !m.starts_with("//"))
        {
            uses.push(module.to_string());
        }
    }
    Depends {
        uses: distinct(uses),
        dev: Vec::new(),
    }
}

/// The root's `<dependencies>`: `test`-scoped ones are for development.
pub fn pom(pom: &Pom) -> Depends {
    let (dev, uses): (Vec<_>, Vec<_>) = pom
        .dependencies
        .iter()
        .partition(|(_, scope)| scope.as_deref() == Some("test"));
    let names =
        |list: Vec<&(String, Option<String>)>| list.into_iter().map(|(a, _)| a.clone()).collect();
    Depends {
        uses: distinct(names(uses)),
        dev: distinct(names(dev)),
    }
}

/// `names` in their order, each once.
fn distinct(names: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_manifest_lists_its_direct_dependencies_apart_from_its_development_ones() {
        let cargo_toml: toml::Table = "[package]\nname = \"x\"\n[dependencies]\nbincode = \"1\"\nclap = { version = \"4\" }\n[target.'cfg(windows)'.dependencies]\nwhich = \"6\"\n[dev-dependencies]\nassert_cmd = \"2\"\n".parse().unwrap();
        assert_eq!(
            cargo(&cargo_toml),
            Depends {
                uses: vec!["bincode".into(), "clap".into(), "which".into()],
                dev: vec!["assert_cmd".into()],
            }
        );
        let pyproject_toml: toml::Table = "[project]\ndependencies = [\"requests[socks]>=2.0; python_version<'3.8'\", \"Click\"]\n[project.optional-dependencies]\ntest = [\"pytest>=7\"]\n[dependency-groups]\ndev = [\"ruff\", {include-group = \"test\"}]\n".parse().unwrap();
        assert_eq!(
            pyproject(&pyproject_toml),
            Depends {
                uses: vec!["requests".into(), "Click".into()],
                dev: vec!["pytest".into(), "ruff".into()],
            }
        );
        let package: serde_json::Value = serde_json::from_str(
            "{\"dependencies\": {\"defu\": \"^6\"}, \"devDependencies\": {\"supertest\": \"^7\", \"mocha\": \"^10\"}}",
        )
        .unwrap();
        assert_eq!(
            package_json(&package),
            Depends {
                uses: vec!["defu".into()],
                dev: vec!["supertest".into(), "mocha".into()],
            }
        );
        let go = "module x\n\ngo 1.21\n\nrequire (\n\tgithub.com/spf13/pflag v1.0.9\n\tgolang.org/x/sys v0.1.0 // indirect\n)\n\nrequire github.com/stretchr/testify v1.8.0\n";
        assert_eq!(
            go_mod(go).uses,
            ["github.com/spf13/pflag", "github.com/stretchr/testify"]
        );
        let pom_xml = "<project>\n  <dependencyManagement>\n    <dependencies>\n      <dependency>\n        <artifactId>managed</artifactId>\n      </dependency>\n    </dependencies>\n  </dependencyManagement>\n  <dependencies>\n    <dependency>\n      <groupId>com.google.errorprone</groupId>\n      <artifactId>error_prone_annotations</artifactId>\n    </dependency>\n    <dependency>\n      <artifactId>junit</artifactId>\n      <scope>test</scope>\n    </dependency>\n  </dependencies>\n</project>\n";
        let read = crate::evidence::markup::read_pom(pom_xml).unwrap();
        assert_eq!(
            pom(&read),
            Depends {
                uses: vec!["error_prone_annotations".into()],
                dev: vec!["junit".into()],
            }
        );
    }

    #[test]
    fn a_long_list_is_cut_and_counted_and_an_empty_one_adds_nothing() {
        let fact = || Draft {
            summary: "x is a Rust project (Cargo.toml)".into(),
            ..Draft::default()
        };
        assert_eq!(with(fact(), Depends::default()).summary, fact().summary);
        let many = Depends {
            uses: (0..30).map(|i| format!("d{i}")).collect(),
            dev: vec!["t".into()],
        };
        let summary = with(fact(), many).summary;
        assert!(
            summary.contains("d23 and 6 more. Development and test dependencies: t"),
            "{summary}"
        );
        assert!(!summary.contains("d24"), "{summary}");
    }
}
