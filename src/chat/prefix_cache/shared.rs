//! Where the shared head cache lives: the one thing harvey keeps outside a workspace.
//!
//! It holds the evaluated head of the system prompt (persona, tool list, examples) per
//! model, so the first message in a new workspace does not prefill it again. Nothing
//! learned from a workspace may go there: the caller saves only ids that are a prefix of
//! the head's own render (see [`super::head_ids`]). The directory is derived and safe to
//! delete; `engine.cache_shared: false` turns it off.
//!
//! Resolution order: `$HARVEY_CACHE_DIR` (the directory itself), else
//! `$XDG_CACHE_HOME/harvey/prefix` (only an absolute path counts, as the XDG spec says),
//! else `$HOME/.cache/harvey/prefix`.

use std::ffi::OsString;
use std::path::PathBuf;

/// The file stem of shared head states (`head-<hash>.{state,json}`).
pub(super) const STEM: &str = "head";

/// The shared head cache directory from the process environment (`None`: no usable
/// variable is set, and the head is then only cached per workspace).
pub fn shared_cache_dir() -> Option<PathBuf> {
    resolve(
        std::env::var_os("HARVEY_CACHE_DIR"),
        std::env::var_os("XDG_CACHE_HOME"),
        std::env::var_os("HOME"),
    )
}

/// [`shared_cache_dir`] from the three variables' values (empty means unset).
pub fn resolve(
    harvey: Option<OsString>,
    xdg: Option<OsString>,
    home: Option<OsString>,
) -> Option<PathBuf> {
    let set = |v: Option<OsString>| v.filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = set(harvey) {
        return Some(dir);
    }
    if let Some(xdg) = set(xdg).filter(|p| p.is_absolute()) {
        return Some(xdg.join("harvey").join("prefix"));
    }
    set(home).map(|home| home.join(".cache").join("harvey").join("prefix"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_order() {
        let s = |v: &str| Some(OsString::from(v));
        type Var = Option<OsString>;
        let cases: [(Var, Var, Var, Option<&str>); 7] = [
            (s("/c/h"), s("/x"), s("/home/u"), Some("/c/h")),
            (None, s("/x"), s("/home/u"), Some("/x/harvey/prefix")),
            (s(""), s("/x"), s("/home/u"), Some("/x/harvey/prefix")),
            (
                None,
                s("relative"),
                s("/home/u"),
                Some("/home/u/.cache/harvey/prefix"),
            ),
            (
                None,
                s(""),
                s("/home/u"),
                Some("/home/u/.cache/harvey/prefix"),
            ),
            (
                None,
                None,
                s("/home/u"),
                Some("/home/u/.cache/harvey/prefix"),
            ),
            (None, None, None, None),
        ];
        for (harvey, xdg, home, want) in cases {
            let got = resolve(harvey.clone(), xdg.clone(), home.clone());
            assert_eq!(got, want.map(PathBuf::from), "{harvey:?} {xdg:?} {home:?}");
        }
    }
}
