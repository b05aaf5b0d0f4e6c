//! The containers open around the scanner's cursor.
//!
//! A closing bracket must match the innermost open container, and after a comma
//! an object wants a key where an array wants a value, so the scanner must know,
//! for every open level, whether it is an array or an object. One bit a level
//! suffices; the first 64 levels live in a `u64` so that the values of real
//! JSON-RPC lines never allocate.

/// The number of levels kept in the inline bitset before the spill vector is used.
const INLINE_LEVELS: usize = u64::BITS as usize;

/// The open containers, outermost first: for each, whether it is an array (bit
/// set) or an object (bit clear).
#[derive(Debug, Default)]
pub(crate) struct OpenContainers {
    /// How many containers are open.
    depth: usize,
    /// The kinds of levels `0..INLINE_LEVELS`: bit `n` for level `n`.
    inline: u64,
    /// The kinds of deeper levels, 64 to a word. It only grows: a word past the
    /// current depth is stale, and a later `push` rewrites the bit it needs.
    spill: Vec<u64>,
}

impl OpenContainers {
    /// No open container (does not allocate).
    pub(crate) const fn new() -> Self {
        Self {
            depth: 0,
            inline: 0,
            spill: Vec::new(),
        }
    }

    /// How many containers are open.
    #[inline]
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// Opens a container inside the innermost one.
    #[inline]
    pub(crate) fn push(&mut self, is_array: bool) {
        let level = self.depth;
        if level < INLINE_LEVELS {
            let bit = 1u64 << level;
            if is_array {
                self.inline |= bit;
            } else {
                self.inline &= !bit;
            }
        } else {
            push_spilled(&mut self.spill, level - INLINE_LEVELS, is_array);
        }
        self.depth += 1;
    }

    /// Closes the innermost container (nothing when none is open).
    #[inline]
    pub(crate) fn pop(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Whether the innermost open container is an array; `None` when none is open.
    #[inline]
    pub(crate) fn innermost_is_array(&self) -> Option<bool> {
        let level = self.depth.checked_sub(1)?;
        Some(if level < INLINE_LEVELS {
            (self.inline >> level) & 1 == 1
        } else {
            let spilled_level = level - INLINE_LEVELS;
            self.spill
                .get(spilled_level / 64)
                .is_some_and(|bits| (bits >> (spilled_level % 64)) & 1 == 1)
        })
    }
}

/// Sets the kind of a level past the inline bitset: rare, so kept out of line,
/// and given only the spill vector so that the depth and the inline bits of
/// the caller never leave registers.
#[cold]
#[inline(never)]
fn push_spilled(spill: &mut Vec<u64>, spilled_level: usize, is_array: bool) {
    let word = spilled_level / 64;
    // Levels are pushed one at a time, so the word is at most one past the end.
    if word == spill.len() {
        spill.push(0);
    }
    if let Some(bits) = spill.get_mut(word) {
        let bit = 1u64 << (spilled_level % 64);
        if is_array {
            *bits |= bit;
        } else {
            *bits &= !bit;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::OpenContainers;

    /// Kinds pushed past the inline bitset come back in reverse order as levels close.
    #[test]
    fn kinds_survive_deep_nesting() {
        let kinds: Vec<bool> = (0..1000).map(|n| n % 3 == 0 || n % 7 == 0).collect();
        let mut open = OpenContainers::new();
        assert_eq!(open.innermost_is_array(), None);
        for &kind in &kinds {
            open.push(kind);
            assert_eq!(open.innermost_is_array(), Some(kind));
        }
        assert_eq!(open.depth(), kinds.len());
        for &kind in kinds.iter().rev() {
            assert_eq!(open.innermost_is_array(), Some(kind));
            open.pop();
        }
        assert_eq!(open.depth(), 0);
        assert_eq!(open.innermost_is_array(), None);
        open.pop();
        assert_eq!(open.depth(), 0);
    }

    /// A level reused after a pop takes its new kind, also in the spill words.
    #[test]
    fn reused_levels_take_the_new_kind() {
        let mut open = OpenContainers::new();
        for _ in 0..300 {
            open.push(true);
        }
        for _ in 0..200 {
            open.pop();
        }
        for _ in 0..200 {
            open.push(false);
            assert_eq!(open.innermost_is_array(), Some(false));
        }
        for _ in 0..200 {
            open.pop();
        }
        assert_eq!(open.innermost_is_array(), Some(true));
    }
}
