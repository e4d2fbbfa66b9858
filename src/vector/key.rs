//! Row keys as bytes, so a scan copy's file can carry the keys of its vectors: a
//! process that finds the file current needs nothing else from SQLite.

/// A key a [`super::VectorCache`] keeps beside each vector.
pub trait Key: Clone + Send + Sync + Sized {
    fn encode(&self, out: &mut Vec<u8>);
    /// Reads one key off the front of `input`; `None` when the bytes are not one.
    fn decode(input: &mut &[u8]) -> Option<Self>;
}

fn take<'a>(input: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if input.len() < n {
        return None;
    }
    let (head, rest) = input.split_at(n);
    *input = rest;
    Some(head)
}

impl Key for i64 {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        Some(i64::from_le_bytes(take(input, 8)?.try_into().ok()?))
    }
}

impl Key for String {
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.len() as u32).to_le_bytes());
        out.extend_from_slice(self.as_bytes());
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        let len = u32::from_le_bytes(take(input, 4)?.try_into().ok()?) as usize;
        String::from_utf8(take(input, len)?.to_vec()).ok()
    }
}

impl<T: Key> Key for Option<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            None => out.push(0),
            Some(v) => {
                out.push(1);
                v.encode(out);
            }
        }
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        match take(input, 1)? {
            [0] => Some(None),
            [1] => Some(Some(T::decode(input)?)),
            _ => None,
        }
    }
}

impl<A: Key, B: Key> Key for (A, B) {
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.encode(out);
        self.1.encode(out);
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        Some((A::decode(input)?, B::decode(input)?))
    }
}

impl<A: Key, B: Key, C: Key> Key for (A, B, C) {
    fn encode(&self, out: &mut Vec<u8>) {
        self.0.encode(out);
        self.1.encode(out);
        self.2.encode(out);
    }
    fn decode(input: &mut &[u8]) -> Option<Self> {
        Some((A::decode(input)?, B::decode(input)?, C::decode(input)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_short_input_is_refused() {
        let key = ("mem_1".to_string(), "workflow".to_string(), Some(-5i64));
        let mut bytes = Vec::new();
        key.encode(&mut bytes);
        (7i64, 9i64).encode(&mut bytes);
        None::<i64>.encode(&mut bytes);
        let mut input = &bytes[..];
        assert_eq!(
            <(String, String, Option<i64>)>::decode(&mut input),
            Some(key)
        );
        assert_eq!(<(i64, i64)>::decode(&mut input), Some((7, 9)));
        assert_eq!(<Option<i64>>::decode(&mut input), Some(None));
        assert!(input.is_empty());
        for cut in 0..bytes.len().min(20) {
            let mut short = &bytes[..cut];
            assert_eq!(
                <(String, String, Option<i64>)>::decode(&mut short),
                None,
                "cut at {cut}"
            );
        }
        assert_eq!(<Option<i64>>::decode(&mut &[2u8][..]), None, "bad tag");
    }
}
