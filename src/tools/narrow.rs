//! A turn that may call only some of the session's tools (a skill's `allowed-tools`):
//! the tools are lent out of the registry for the turn and put back where they stood,
//! so the system prompt, which lists the whole registry, stays as it was (the cached
//! prefix survives) while the call grammar and the router see only the lent ones.

use super::{Registry, Tool};

/// Tools lent out of a registry, and where each stood in it.
pub struct Lent {
    pub registry: Registry,
    at: Vec<usize>,
}

impl Registry {
    /// Moves the tools named in `names` (in registry order) into a registry of their own.
    pub fn lend(&mut self, names: &[String]) -> Lent {
        let mut at = Vec::new();
        let mut lent: Vec<Box<dyn Tool>> = Vec::new();
        let mut kept = Vec::new();
        for (i, tool) in std::mem::take(&mut self.tools).into_iter().enumerate() {
            if names.iter().any(|n| n == tool.name()) {
                at.push(i);
                lent.push(tool);
            } else {
                kept.push(tool);
            }
        }
        self.tools = kept;
        Lent {
            registry: Registry { tools: lent },
            at,
        }
    }

    /// Puts lent tools back where they stood.
    pub fn restore(&mut self, lent: Lent) {
        for (i, tool) in lent.at.into_iter().zip(lent.registry.tools) {
            let i = i.min(self.tools.len());
            self.tools.insert(i, tool);
        }
    }

    /// The tools' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.tools.iter().map(|t| t.name()).collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::tools::workspace::{ListFiles, ReadFile, SearchFiles};
    use crate::tools::Registry;

    #[test]
    fn lent_tools_come_back_in_their_places() {
        let root = std::path::PathBuf::from(".");
        let mut r = Registry::new();
        r.add(Box::new(ReadFile { root: root.clone() }));
        r.add(Box::new(ListFiles { root: root.clone() }));
        r.add(Box::new(SearchFiles { root }));
        let lent = r.lend(&["search_files".into(), "read_file".into(), "nope".into()]);
        assert_eq!(lent.registry.names(), ["read_file", "search_files"]);
        assert_eq!(r.names(), ["list_files"]);
        r.restore(lent);
        assert_eq!(r.names(), ["read_file", "list_files", "search_files"]);
        let none = r.lend(&[]);
        assert!(none.registry.is_empty());
        r.restore(none);
        assert_eq!(r.names().len(), 3);
    }
}
