//! json-shallow against serde_json: `object_members` must accept exactly the
//! texts that serde_json accepts as a `&RawValue` object whose keys decode, with
//! the same members in the same order (duplicates kept); `nesting` must count
//! the levels that serde_json sees; the depth limit must be exactly `nesting`;
//! the members of an inner object read in the same pass must be those of a
//! second reading. No input may panic.
#![no_main]

use json_shallow::{nesting, object_members, object_members_with_inner};
// serde_json's answer, the same oracle as the crate's own tests (its depth
// helper is not used here: serde_json's walk below counts duplicate keys too).
#[path = "../../support/json-shallow/tests/oracle/mod.rs"]
#[allow(dead_code)]
mod oracle;
use oracle::serde_members;
use libfuzzer_sys::fuzz_target;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The levels of nesting of a value as serde_json walks it (duplicate keys are
/// all walked, unlike in a `Value`).
struct Depth(usize);

impl<'de> Deserialize<'de> for Depth {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DepthVisitor;

        impl<'de> Visitor<'de> for DepthVisitor {
            type Value = Depth;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("any JSON value")
            }

            fn visit_bool<E>(self, _: bool) -> Result<Depth, E> {
                Ok(Depth(0))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Depth, E> {
                Ok(Depth(0))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Depth, E> {
                Ok(Depth(0))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Depth, E> {
                Ok(Depth(0))
            }
            fn visit_str<E>(self, _: &str) -> Result<Depth, E> {
                Ok(Depth(0))
            }
            fn visit_unit<E>(self) -> Result<Depth, E> {
                Ok(Depth(0))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Depth, A::Error> {
                let mut deepest = 0;
                while let Some(Depth(depth)) = seq.next_element()? {
                    deepest = deepest.max(depth);
                }
                Ok(Depth(deepest + 1))
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Depth, A::Error> {
                let mut deepest = 0;
                while let Some((IgnoredAny, Depth(depth))) = map.next_entry()? {
                    deepest = deepest.max(depth);
                }
                Ok(Depth(deepest + 1))
            }
        }

        deserializer.deserialize_any(DepthVisitor)
    }
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks a depth limit; the rest is the text (made UTF-8, as
    // the API takes `&str`).
    let Some((&limit, text)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(text);
    let text = text.as_ref();

    let ours = object_members(text, usize::MAX);
    let pairs = ours.as_ref().map(|members| {
        members
            .iter()
            .map(|member| (member.key.to_string(), member.value.to_owned()))
            .collect::<Vec<_>>()
    });
    assert_eq!(pairs, serde_members(text), "text {text:?}");

    let depth = nesting(text);
    if ours.is_some() {
        // The limit holds exactly at the depth, whatever limit is asked.
        let limit = usize::from(limit % 8);
        assert_eq!(object_members(text, limit).is_some(), depth <= limit);
        assert!(object_members(text, depth).is_some());
        assert!(object_members(text, depth - 1).is_none());
    }
    // serde_json's recursion limit (128) refuses deeper texts: those are
    // compared only through the limit above.
    if let Ok(Depth(expected)) = serde_json::from_str::<Depth>(text) {
        assert_eq!(depth, expected, "text {text:?}");
    }
    for member in ours.iter().flatten() {
        if let Ok(Depth(expected)) = serde_json::from_str::<Depth>(member.value) {
            assert_eq!(nesting(member.value), expected, "value {:?}", member.value);
        }
    }

    // The inner object: the first member's name, read in the same pass. When
    // one member of that name is an object, that is a second reading of it.
    if let Some(outer) = &ours
        && let Some(first) = outer.first()
    {
        let objects: Vec<_> = outer
            .iter()
            .filter(|member| member.key == first.key && member.value.starts_with('{'))
            .collect();
        let one_pass = object_members_with_inner(text, usize::MAX, &first.key);
        match objects.as_slice() {
            [] => assert_eq!(one_pass, Some((outer.clone(), None)), "text {text:?}"),
            [object] => {
                let second = object_members(object.value, usize::MAX);
                let expected = second.map(|inner| (outer.clone(), Some(inner)));
                assert_eq!(one_pass, expected, "text {text:?}");
            }
            // Earlier objects of that name are read too, and their keys must decode.
            _ => {
                if let Some((members, _)) = one_pass {
                    assert_eq!(&members, outer, "text {text:?}");
                }
            }
        }
    }
});
