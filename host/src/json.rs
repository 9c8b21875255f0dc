//! JSON output's conventions: a finite number is a number; NaN and the
//! infinities are the strings `"NaN"`, `"inf"` and `"-inf"`, so that they
//! are never confused with `null` (which means "not run").

use serde::Serializer;

/// Serializes a float by this module's rule.
pub fn float<S: Serializer, F: Into<f64> + Copy>(x: &F, s: S) -> Result<S::Ok, S::Error> {
    let x: f64 = (*x).into();
    if x.is_finite() {
        s.serialize_f64(x)
    } else if x.is_nan() {
        s.serialize_str("NaN")
    } else if x > 0.0 {
        s.serialize_str("inf")
    } else {
        s.serialize_str("-inf")
    }
}

/// [`float`] for an optional float (`None` is `null`).
pub fn opt_float<S: Serializer, F: Into<f64> + Copy>(x: &Option<F>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(v) => float(v, s),
        None => s.serialize_none(),
    }
}

/// Any report as one JSON object.
pub fn to_string<T: serde::Serialize>(report: &T) -> String {
    serde_json::to_string_pretty(report).expect("reports hold only plain data")
}
