//! The targets of the bench (docs/benchmarks.md, "The targets"), and whether a
//! measurement meets them.

use serde::Serialize;

/// A target for the bridged figure of a row.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// bridged ≤ `ratio` × direct and bridged − direct ≤ `above` (in the row's unit).
    RatioAndAbove { ratio: f64, above: f64 },
    /// bridged ≤ `ratio` × direct.
    RatioAtMost { ratio: f64 },
    /// bridged ≥ `ratio` × direct (throughput).
    RatioAtLeast { ratio: f64 },
    /// bridged ≤ direct + `plus`.
    DirectPlus { plus: f64 },
    /// bridged ≤ `limit`.
    AtMost { limit: f64 },
    /// bridged ≤ `times` × `message` (memory for a message of `message` bytes).
    TimesMessage { times: f64, message: f64 },
}

impl Target {
    /// Whether `bridged` meets the target; `None` when it needs a direct figure
    /// that is missing.
    pub fn met(&self, direct: Option<f64>, bridged: f64) -> Option<bool> {
        Some(match *self {
            Target::RatioAndAbove { ratio, above } => {
                let direct = direct?;
                bridged <= ratio * direct && bridged - direct <= above
            }
            Target::RatioAtMost { ratio } => bridged <= ratio * direct?,
            Target::RatioAtLeast { ratio } => bridged >= ratio * direct?,
            Target::DirectPlus { plus } => bridged <= direct? + plus,
            Target::AtMost { limit } => bridged <= limit,
            Target::TimesMessage { times, message } => bridged <= times * message,
        })
    }

    /// The target as text, with `format` for values in the row's unit.
    pub fn describe(&self, format: impl Fn(f64) -> String) -> String {
        match *self {
            Target::RatioAndAbove { ratio, above } => {
                format!("≤ {ratio}× and ≤ direct + {}", format(above))
            }
            Target::RatioAtMost { ratio } => format!("≤ {ratio}×"),
            Target::RatioAtLeast { ratio } => format!("≥ {ratio}×"),
            Target::DirectPlus { plus } => format!("≤ direct + {}", format(plus)),
            Target::AtMost { limit } => format!("≤ {}", format(limit)),
            Target::TimesMessage { times, .. } => format!("≤ {times}× message"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_met_or_not() {
        let p50 = Target::RatioAndAbove {
            ratio: 1.5,
            above: 100e-6,
        };
        assert_eq!(p50.met(Some(100e-6), 149e-6), Some(true));
        assert_eq!(p50.met(Some(100e-6), 151e-6), Some(false));
        assert_eq!(p50.met(Some(1e-3), 1.2e-3), Some(false));
        assert_eq!(p50.met(None, 1e-3), None);
        assert_eq!(
            Target::RatioAtLeast { ratio: 0.7 }.met(Some(1000.0), 700.0),
            Some(true)
        );
        assert_eq!(
            Target::DirectPlus { plus: 0.02 }.met(Some(0.01), 0.031),
            Some(false)
        );
        assert_eq!(Target::AtMost { limit: 0.05 }.met(None, 0.04), Some(true));
        let memory = Target::TimesMessage {
            times: 3.0,
            message: 64.0,
        };
        assert_eq!(memory.met(None, 192.0), Some(true));
        assert_eq!(memory.met(None, 193.0), Some(false));
    }
}
