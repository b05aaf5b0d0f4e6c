//! Pages of `tools/list`, `prompts/list`, `resources/list` and
//! `resources/templates/list` (server/utilities/pagination.mdx).
//!
//! A page has at most [`PAGE_SIZE`] items. The cursor is opaque to the client: the
//! base64url text of `<list>:<offset>`. A cursor of another list, one that does not
//! decode, or one past the end gets -32602; the empty string is a cursor like any other
//! (and not valid).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rmcp::model::{ErrorCode, ErrorData};
use serde_json::{Map, Value, json};

/// Items per page of every list.
pub const PAGE_SIZE: usize = 100;

/// The page of `items` that `params.cursor` asks for, with the `nextCursor` of the
/// following page.
pub fn page<T: Clone>(
    list: &str,
    items: &[T],
    params: &Map<String, Value>,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let start = match params.get("cursor") {
        None => 0,
        Some(Value::String(cursor)) => decode(list, cursor)
            .filter(|start| *start <= items.len())
            .ok_or_else(|| {
            ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                "The cursor is not valid for this list.",
                Some(json!({"cursor": cursor})),
            )
        })?,
        Some(_) => {
            return Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                "The cursor must be a string.",
                None,
            ));
        }
    };
    let end = (start + PAGE_SIZE).min(items.len());
    let next = (end < items.len()).then(|| encode(list, end));
    Ok((items[start..end].to_vec(), next))
}

fn encode(list: &str, offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{list}:{offset}"))
}

fn decode(list: &str, cursor: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (name, offset) = text.split_once(':')?;
    if name != list || offset.starts_with('+') {
        return None;
    }
    offset.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(cursor: Option<&str>) -> Map<String, Value> {
        let mut params = Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), cursor.into());
        }
        params
    }

    #[test]
    fn pages_follow_each_other_to_the_end() {
        let items: Vec<usize> = (0..171).collect();
        let (first, next) = page("tools", &items, &params(None)).unwrap();
        assert_eq!(first.len(), 100);
        let next = next.unwrap();
        let (second, last) = page("tools", &items, &params(Some(&next))).unwrap();
        assert_eq!(second, (100..171).collect::<Vec<_>>());
        assert!(last.is_none());
    }

    #[test]
    fn foreign_and_empty_cursors_are_refused() {
        let items = [1, 2, 3];
        let prompts = encode("prompts", 1);
        assert!(page("tools", &items, &params(Some(&prompts))).is_err());
        assert!(page("tools", &items, &params(Some(""))).is_err());
        assert!(page("tools", &items, &params(Some(&encode("tools", 4)))).is_err());
        assert!(
            page("tools", &items, &params(Some(&encode("tools", 3))))
                .unwrap()
                .0
                .is_empty()
        );
    }
}
