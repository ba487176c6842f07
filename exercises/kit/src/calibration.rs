//! Performance thresholds as data: the active calibration's threshold for the
//! running check, by its full name, instead of the constant compiled into the
//! exercise. The grader chooses the calibration of the GPU that grades (or the
//! nearest calibrated model) at the start of a run and installs it here
//! ([`install`]); [`crate::perf::require_speedup`] and
//! [`crate::perf::require_share`] look their threshold up with [`threshold`].
//! Files, the rule that placed each threshold and the choice of a model live
//! in the grader (`grader/src/calibrate/`): the kit only holds the numbers.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// Where a threshold came from, as the grades JSON and the reports name it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Source {
    /// The GPU model whose calibration set it ("NVIDIA H100 80GB HBM3"), or
    /// `compiled constant` where no calibration exists.
    pub gpu: String,
    /// When that calibration was measured (or what it was carried over from).
    pub date: String,
    /// `exact` (this GPU's model), `nearest` (another model; this one has no
    /// calibration), `given` (chosen with `--calibration FILE`), or `none`.
    pub how: String,
}

impl Source {
    /// The source of a compiled constant: no calibration at all.
    pub fn compiled() -> Self {
        Self { gpu: COMPILED.into(), date: "-".into(), how: "none".into() }
    }

    /// "NVIDIA H100 80GB HBM3, 2026-11-25" with what kind of match, for a message.
    pub fn describe(&self) -> String {
        match self.how.as_str() {
            "none" => "the compiled constant: no calibration for this GPU".into(),
            "exact" => format!("calibrated on {} ({})", self.gpu, self.date),
            how => format!("calibrated on {} ({}; {how})", self.gpu, self.date),
        }
    }
}

/// What [`Source::gpu`] says where no calibration exists.
pub const COMPILED: &str = "compiled constant";

/// The thresholds of one calibration, by full check name.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    pub source: Source,
    pub checks: HashMap<String, f64>,
}

/// The threshold a check uses and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    pub value: f64,
    pub source: Source,
}

impl Thresholds {
    /// `check`'s threshold; the compiled constant where the calibration has
    /// none for it (a check added after it was measured), saying so.
    pub fn for_check(&self, check: &str, compiled: f64) -> Chosen {
        match self.checks.get(check) {
            Some(&value) => Chosen { value, source: self.source.clone() },
            None => Chosen {
                value: compiled,
                source: Source {
                    how: format!("not in the calibration of {}: compiled constant", self.source.gpu),
                    ..Source::compiled()
                },
            },
        }
    }
}

fn active() -> &'static RwLock<Option<Arc<Thresholds>>> {
    static ACTIVE: RwLock<Option<Arc<Thresholds>>> = RwLock::new(None);
    &ACTIVE
}

/// Makes `thresholds` the calibration of every check from now on in this
/// process (`None`: the compiled constants).
pub fn install(thresholds: Option<Thresholds>) {
    *active().write().unwrap_or_else(|p| p.into_inner()) = thresholds.map(Arc::new);
}

/// The installed calibration, if any.
pub fn installed() -> Option<Arc<Thresholds>> {
    active().read().unwrap_or_else(|p| p.into_inner()).clone()
}

/// The threshold of check `check` (the running one's name, where known): the
/// installed calibration's, else `compiled`.
pub fn threshold(check: Option<&str>, compiled: f64) -> Chosen {
    match (installed(), check) {
        (Some(t), Some(check)) => t.for_check(check, compiled),
        (Some(t), None) => {
            Chosen { value: compiled, source: Source { how: "outside a check".into(), ..t.source.clone() } }
        }
        (None, _) => Chosen { value: compiled, source: Source::compiled() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_takes_its_calibrated_threshold_else_the_constant_saying_so() {
        let source = Source { gpu: "NVIDIA H200".into(), date: "2026-12-01".into(), how: "exact".into() };
        let t = Thresholds {
            source: source.clone(),
            checks: HashMap::from([("ex05::stencil::perf::share-of-copy".to_string(), 0.3)]),
        };
        assert_eq!(t.for_check("ex05::stencil::perf::share-of-copy", 0.45), Chosen { value: 0.3, source });
        let other = t.for_check("ex10::x::perf::y", 2.0);
        assert_eq!(other.value, 2.0);
        assert!(other.source.how.contains("not in the calibration of NVIDIA H200"), "{:?}", other.source);
        assert!(Source::compiled().describe().contains("no calibration"));
    }
}
