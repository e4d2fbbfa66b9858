//! Values known only at run time (a file the request names, an identifier it asks about)
//! as the `'static` lists a [`super::ParamKind::Enum`] holds, so a chosen call's grammar
//! can be narrowed to them. Each distinct list is kept once for the life of the process:
//! a turn narrows a call to one or two short names, so what is kept grows only with the
//! distinct names a session asks about.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Longest value kept, in bytes.
const MAX_VALUE: usize = 200;

/// `values` as a `'static` list, the same list for the same values; `None` when one of
/// them cannot stand in a grammar's string literal as it is (a quote, a backslash, a
/// control character, or longer than [`MAX_VALUE`]) or there are none.
pub fn interned(values: &[String]) -> Option<&'static [&'static str]> {
    let literal = |v: &String| {
        !v.is_empty()
            && v.len() <= MAX_VALUE
            && !v.chars().any(|c| c == '"' || c == '\\' || c.is_control())
    };
    if values.is_empty() || !values.iter().all(literal) {
        return None;
    }
    type Kept = Mutex<HashMap<Vec<String>, &'static [&'static str]>>;
    static KEPT: OnceLock<Kept> = OnceLock::new();
    let mut kept = KEPT
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let list = kept.entry(values.to_vec()).or_insert_with(|| {
        let leaked: Vec<&'static str> = values
            .iter()
            .map(|v| &*Box::leak(v.clone().into_boxed_str()))
            .collect();
        Box::leak(leaked.into_boxed_slice())
    });
    Some(*list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_values_give_the_same_list_and_unsafe_ones_none() {
        let a = interned(&["LICENSE-APACHE".into()]).unwrap();
        let b = interned(&["LICENSE-APACHE".into()]).unwrap();
        assert_eq!(a, ["LICENSE-APACHE"]);
        assert!(std::ptr::eq(a, b), "kept once");
        assert!(interned(&[]).is_none());
        assert!(interned(&["a\"b".into()]).is_none());
        assert!(interned(&["x".repeat(MAX_VALUE + 1)]).is_none());
    }
}
