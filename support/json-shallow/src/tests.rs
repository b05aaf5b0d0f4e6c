//! Exact cases of every rule, both ways, each checked against serde_json too.

#[path = "../tests/oracle/mod.rs"]
mod oracle;

use crate::{Member, array_items, may_spell, nesting, object_members, object_members_with_inner};
use oracle::{serde_items, serde_members, value_depth};
use std::borrow::Cow;

/// The members as (key, value) pairs, to compare with serde_json's.
fn pairs(members: &[Member<'_>]) -> Vec<(String, String)> {
    members
        .iter()
        .map(|member| (member.key.to_string(), member.value.to_owned()))
        .collect()
}

/// `object_members` with no depth limit, after a check that serde_json agrees.
fn members(text: &str) -> Option<Vec<Member<'_>>> {
    let ours = object_members(text, usize::MAX);
    assert_eq!(
        ours.as_deref().map(pairs),
        serde_members(text),
        "disagreement with serde_json on {text:?}"
    );
    ours
}

#[track_caller]
fn accepted(text: &str) {
    assert!(members(text).is_some(), "refused: {text:?}");
}

#[track_caller]
fn refused(text: &str) {
    assert!(members(text).is_none(), "accepted: {text:?}");
}

/// `{"v":<value>}`, so that a value rule can be checked inside an object.
fn in_object(value: &str) -> String {
    format!("{{\"v\":{value}}}")
}

#[test]
fn strings() {
    for value in [
        r#""""#,
        r#""plain""#,
        r#""\" \\ \/ \b \f \n \r \t""#,
        r#""\u0000 \u00e9 \u00E9 \uFFFF \uabcd""#,
        r#""\ud83d\ude00""#,
        "\"\u{7f} é 😀 \u{2028}\"",
        r#""[{,:}]""#,
        r#""\n\t\"\\\/""#,
        r#""\\\\""#,
        r#""a\u0041\n\u0042\\""#,
    ] {
        accepted(&in_object(value));
        accepted(&format!("{{{value}:1}}"));
    }
    for value in [
        "\"\u{0}\"",
        "\"\u{1}\"",
        "\"a\nb\"",
        "\"\t\"",
        "\"\u{1f}\"",
        r#""\u123""#,
        r#""\u12G4""#,
        r#""\u+123""#,
        r#""\x41""#,
        r#""\'""#,
        r#""\U0041""#,
        r#""\"#,
        r#""\u"#,
        r#""abc"#,
        r#""\\\""#,
        r#""\n\"#,
        r#"'a'"#,
    ] {
        refused(&in_object(value));
        refused(&format!("{{{value}:1}}"));
    }
}

#[test]
fn numbers() {
    for number in [
        "0",
        "-0",
        "7",
        "-12",
        "10",
        "0.5",
        "-0.0",
        "1.25",
        "1e5",
        "1E5",
        "1e+5",
        "1e-5",
        "0e0",
        "0.0e-0",
        "1.5E+10",
        "1e400",
        "-1e-400",
        "123456789012345678901234567890",
    ] {
        accepted(&in_object(number));
        accepted(&in_object(&format!("[{number}]")));
    }
    for number in [
        "01", "-01", "00", "1.", "-", "-a", ".5", "+1", "1e", "1e+", "1E-", "2.e3", "1.5e", "0x10",
        "1_000", "Infinity", "NaN", "-.5", "1ee5", "1e5.0", "--1",
    ] {
        refused(&in_object(number));
        refused(&in_object(&format!("[{number}]")));
    }
}

#[test]
fn literals() {
    for literal in ["true", "false", "null"] {
        accepted(&in_object(literal));
        accepted(&in_object(&format!("[{literal},{literal}]")));
    }
    for literal in [
        "tru",
        "True",
        "nul",
        "nulll",
        "truee",
        "fals",
        "falsey",
        "NULL",
        "undefined",
        "t",
    ] {
        refused(&in_object(literal));
    }
}

#[test]
fn commas_and_colons() {
    for text in [
        "{\"a\":1,}",
        "{\"a\":[1,]}",
        "{\"a\":{\"b\":1,}}",
        "{,}",
        "{,\"a\":1}",
        "{\"a\":[,1]}",
        "{\"a\":[1,,2]}",
        "{\"a\":1,,\"b\":2}",
        "{\"a\" 1}",
        "{\"a\"::1}",
        "{\"a\":}",
        "{\"a\"}",
        "{:1}",
        "{1:1}",
        "{\"a\":{1:1}}",
        "{\"a\":{\"b\"}}",
        "{\"a\":1 \"b\":2}",
        "{\"a\":[1 2]}",
        "{\"a\":{\"b\":1 \"c\":2}}",
        "{\"a\":[\"b\":1]}",
    ] {
        refused(text);
    }
}

#[test]
fn brackets_must_match() {
    for text in [
        "{\"a\":[}",
        "{\"a\":{]}",
        "{\"a\":[1}]}",
        "{\"a\":{\"b\":1]}",
        "{\"a\":[[]}",
        "{\"a\":[]]}",
        "{",
        "{\"a\":1",
        "{\"a\":[",
        "{\"a\":{",
        "}",
    ] {
        refused(text);
    }
    // A mismatch far past the inline bitset of open containers.
    let deep = format!("{{\"a\":{}1{}}}", "[{\"k\":".repeat(150), "}]".repeat(150));
    accepted(&deep);
    let mismatched = deep.replacen("1}]}]", "1]}]}", 1);
    refused(&mismatched);
}

#[test]
fn only_objects_with_nothing_after_them() {
    for text in ["", " ", "\n", "[]", "[{}]", "1", "\"a\"", "null", "true"] {
        refused(text);
    }
    for text in ["{} x", "{}{}", "{}]", "{}}", "{},", "{} 1", "{}\u{0}"] {
        refused(text);
    }
    accepted("{}");
    accepted(" \t\r\n{} \t\r\n");
}

/// Only space, tab, line feed and carriage return are JSON whitespace.
#[test]
fn other_spaces_are_refused() {
    for space in [
        "\u{a0}", "\u{feff}", "\u{b}", "\u{c}", "\u{2028}", "\u{3000}",
    ] {
        refused(&format!("{space}{{}}"));
        refused(&format!("{{}}{space}"));
        refused(&format!("{{{space}\"a\":1}}"));
        refused(&format!("{{\"a\":[1,{space}2]}}"));
    }
}

#[test]
fn whitespace_everywhere() {
    let text = " \n{ \t\"a\" \r: [ 1 , { \"b\" : null } , [ ] , { } ] ,\n\"c\"\t:\t\"x y\"\r\n}\n ";
    let found = members(text).unwrap();
    assert_eq!(
        found,
        vec![
            Member {
                key: "a".into(),
                value: "[ 1 , { \"b\" : null } , [ ] , { } ]",
            },
            Member {
                key: "c".into(),
                value: "\"x y\"",
            },
        ]
    );
}

#[test]
fn keys_are_decoded() {
    let text =
        r#"{"plain":1,"a\"b\\c\/d\be\ff\ng\rh\ti":2,"\u00e9\u20AC":3,"\ud83d\ude00":4,"é":5}"#;
    let found = members(text).unwrap();
    let keys: Vec<&str> = found.iter().map(|member| member.key.as_ref()).collect();
    assert_eq!(
        keys,
        ["plain", "a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti", "é€", "😀", "é"]
    );
    // Keys without escapes borrow the input; the others are decoded copies.
    assert!(matches!(found[0].key, Cow::Borrowed("plain")));
    assert!(matches!(found[1].key, Cow::Owned(_)));
    assert!(matches!(found[4].key, Cow::Borrowed("é")));
}

/// A lone surrogate makes no `String`: refused in a key of the object read, fine
/// in a value and in a nested key (a raw value does not decode them).
#[test]
fn lone_surrogates() {
    for key in [
        r"\ud800",
        r"\udc00",
        r"a\ud83d",
        r"\ud83d\u0041",
        r"\ud83d\ud83d",
        r"\ude00\ud83d",
    ] {
        refused(&format!("{{\"{key}\":1}}"));
        accepted(&format!("{{\"k\":\"{key}\"}}"));
        accepted(&format!("{{\"k\":{{\"{key}\":1}}}}"));
        accepted(&format!("{{\"k\":[\"{key}\"]}}"));
    }
}

#[test]
fn duplicate_keys_are_all_returned_in_order() {
    let found = members(r#"{"id":1,"x":true,"id":"two","id":[3]}"#).unwrap();
    assert_eq!(
        pairs(&found),
        [
            ("id".into(), "1".into()),
            ("x".into(), "true".into()),
            ("id".into(), "\"two\"".into()),
            ("id".into(), "[3]".into()),
        ]
    );
}

#[test]
fn depth_limit() {
    for (text, depth) in [
        ("{}", 1),
        ("{\"a\":1}", 1),
        ("{\"a\":[]}", 2),
        ("{\"a\":[1]}", 2),
        ("{\"a\":{}}", 2),
        ("{\"a\":[[1],{\"b\":{}}],\"c\":{}}", 4),
        ("{\"a\":\"[[[[\"}", 1),
    ] {
        assert_eq!(nesting(text), depth, "{text}");
        assert_eq!(
            value_depth(&serde_json::from_str(text).unwrap()),
            depth,
            "{text}"
        );
        assert!(object_members(text, depth).is_some(), "{text} at {depth}");
        assert!(
            object_members(text, depth + 1).is_some(),
            "{text} at {depth}"
        );
        assert!(
            object_members(text, depth - 1).is_none(),
            "{text} under {depth}"
        );
    }
    assert!(object_members("{}", 0).is_none());
    // serde_json sets no depth limit on a raw value, even far past its own 128.
    for levels in [127, 128, 129, 10_000] {
        let text = format!("{{\"a\":{}{}}}", "[".repeat(levels), "]".repeat(levels));
        assert_eq!(nesting(&text), levels + 1);
        assert!(object_members(&text, levels + 1).is_some(), "{levels}");
        assert!(object_members(&text, levels).is_none(), "{levels}");
        accepted(&text);
    }
    // A million open brackets: no recursion, so no stack overflow, and a depth
    // limit far above them does not help a text that never closes.
    let unclosed = format!("{{\"a\":{}", "[".repeat(1_000_000));
    assert!(object_members(&unclosed, usize::MAX).is_none());
    assert_eq!(nesting(&unclosed), 1_000_001);
    let closed = format!("{unclosed}{}}}", "]".repeat(1_000_000));
    assert!(object_members(&closed, usize::MAX).is_some());
    assert!(object_members(&closed, 1_000_000).is_none());
}

#[test]
fn values_are_trimmed_slices_of_the_input() {
    let text = "{\"a\" :  {\"b\": [1, 2]}  , \"c\":-1.5e3 ,\"d\":\"s\" }";
    let found = members(text).unwrap();
    assert_eq!(pairs(&found)[0].1, "{\"b\": [1, 2]}");
    for member in &found {
        // A sub-slice of the input, not a copy.
        let start = member.value.as_ptr() as usize - text.as_ptr() as usize;
        assert_eq!(&text[start..start + member.value.len()], member.value);
        assert_eq!(member.value.trim(), member.value);
    }
}

/// A line of the bridge, as it is.
#[test]
fn a_json_rpc_line() {
    let line = r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","content":[{"type":"text","text":"hello, bridge"}],"isError":false,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"bridge-fixture-server","version":"0.1.0"}}}}"#;
    let found = members(line).unwrap();
    let keys: Vec<&str> = found.iter().map(|member| member.key.as_ref()).collect();
    assert_eq!(keys, ["jsonrpc", "id", "result"]);
    assert_eq!(nesting(found[2].value), 3);
    let result = object_members(found[2].value, 3).unwrap();
    assert_eq!(result.len(), 4);
    assert!(object_members(line, 3).is_none());
    assert!(object_members(line, 4).is_some());
}

/// Long strings go through memchr in blocks: a control byte or an escape is
/// found wherever it falls, and the value ends at the right quote.
#[test]
fn long_strings() {
    let long = "x".repeat(100_000);
    accepted(&format!("{{\"{long}\":\"{long}\"}}"));
    for at in [
        0,
        15,
        16,
        17,
        16 * 1024 - 1,
        16 * 1024,
        16 * 1024 + 1,
        99_999,
    ] {
        let mut control = long.clone().into_bytes();
        control[at] = b'\n';
        let control = String::from_utf8(control).unwrap();
        refused(&format!("{{\"v\":\"{control}\"}}"));
        refused(&format!("{{\"{control}\":1}}"));

        let escaped = format!("{}\\\"{}", &long[..at], &long[at..]);
        accepted(&format!("{{\"v\":\"{escaped}\",\"w\":1}}"));
        let text = format!("{{\"{escaped}\":1}}");
        let found = members(&text).unwrap();
        assert_eq!(found[0].key.len(), long.len() + 1);
    }
    refused(&format!("{{\"v\":\"{long}}}"));
}

#[test]
fn an_inner_object_is_read_in_the_same_pass() {
    let text = r#"{"jsonrpc":"2.0","id":1,"result":{"a":[1],"\u0062":{"c":2}},"x":{"y":1}}"#;
    let (outer, inner) = object_members_with_inner(text, 3, "result").unwrap();
    assert_eq!(outer, object_members(text, 3).unwrap());
    let inner = inner.unwrap();
    assert_eq!(inner.len(), 2);
    assert_eq!((inner[1].key.as_ref(), inner[1].value), ("b", r#"{"c":2}"#));
    // Not an object, or absent: no inner members.
    assert_eq!(
        object_members_with_inner(r#"{"result":[1]}"#, 9, "result")
            .unwrap()
            .1,
        None
    );
    assert_eq!(
        object_members_with_inner(r#"{"other":{}}"#, 9, "result")
            .unwrap()
            .1,
        None
    );
    // The depth limit counts the inner object's levels as before.
    assert!(object_members_with_inner(text, 2, "result").is_none());
    // A lone surrogate in an inner key: the text cannot be read.
    assert!(object_members_with_inner(r#"{"result":{"\ud800":1}}"#, 9, "result").is_none());
    assert!(object_members(r#"{"result":{"\ud800":1}}"#, 9).is_some());
}

#[test]
fn arrays_are_read_one_level_deep() {
    for (text, items) in [
        ("[]", vec![]),
        (" [ ] ", vec![]),
        ("[1]", vec!["1"]),
        (
            "[ {\"a\": [1, 2]} ,\"s\",null ]\n",
            vec!["{\"a\": [1, 2]}", "\"s\"", "null"],
        ),
        ("[[],{}]", vec!["[]", "{}"]),
    ] {
        assert_eq!(array_items(text, usize::MAX), Some(items.clone()), "{text}");
        let expected: Vec<String> = items.iter().map(|item| item.to_string()).collect();
        assert_eq!(serde_items(text), Some(expected), "{text}");
    }
    for text in [
        "", "{}", "[1,]", "[,1]", "[1 2]", "[1]]", "[1] x", "[", "[\"a]", "1",
    ] {
        assert_eq!(array_items(text, usize::MAX), None, "{text}");
        assert_eq!(serde_items(text), None, "{text}");
    }
    assert!(array_items("[[1]]", 2).is_some());
    assert!(array_items("[[1]]", 1).is_none());
    assert!(array_items("[]", 0).is_none());
}

#[test]
fn a_word_is_spelled_as_it_is_or_with_a_unicode_escape() {
    for (text, spelled) in [
        (r#"{"type":"array"}"#, true),
        (r#"{"arrays":1}"#, true),
        (r#"{"type":"arr\u0061y"}"#, true),
        (r#"{"text":"caf\u00e9"}"#, true),
        (r#"{"type":"object","text":"a\nb\/c\"d"}"#, false),
        (r#"{"type":"Array"}"#, false),
    ] {
        assert_eq!(
            may_spell(text.as_bytes(), &["array", "icons"]),
            spelled,
            "{text}"
        );
        // What serde_json decodes can hold a word only where the text may spell it.
        if !spelled {
            let decoded: serde_json::Value = serde_json::from_str(text).unwrap();
            let strings = decoded.to_string();
            assert!(
                !strings.contains("array") && !strings.contains("icons"),
                "{text}"
            );
        }
    }
    assert!(!may_spell(b"{}", &[]));
}
