//! Named checks, and the verdict of a run made of them.

use crate::error::{Error, Result};
use serde::Serialize;

/// Passed or failed, as the JSON says it.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Passed,
    Failed,
}

impl Status {
    pub fn of(pass: bool) -> Status {
        if pass { Status::Passed } else { Status::Failed }
    }
}

/// A named check, whether it passed, and what was seen.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
}

impl Check {
    pub fn new(name: impl Into<String>, pass: bool, detail: impl Into<String>) -> Check {
        Check { name: name.into(), status: Status::of(pass), detail: detail.into() }
    }

    pub fn pass(&self) -> bool {
        self.status == Status::Passed
    }
}

/// The checks as text: "all N checks passed", or each failure by name.
pub fn render(out: &mut String, checks: &[Check]) {
    let failed: Vec<_> = checks.iter().filter(|c| !c.pass()).collect();
    if failed.is_empty() {
        out.push_str(&match checks.len() {
            1 => "the check passed\n".to_string(),
            n => format!("all {n} checks passed\n"),
        });
    }
    // Each distinct failure once, with every check that failed that way.
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for c in failed {
        match groups.iter_mut().find(|(detail, _)| !detail.is_empty() && *detail == c.detail) {
            Some((_, names)) => names.push(&c.name),
            None => groups.push((&c.detail, vec![&c.name])),
        }
    }
    for (detail, names) in groups {
        // A check named by what must hold (`the cooperative sum is within its
        // bound`) is quoted and said not to hold, so that a failure never
        // reads as that statement made; one named by its case (`n = 611`) is
        // named as it is.
        let claims = names.iter().all(|n| is_claim(n));
        let names = match claims {
            true => {
                let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
                format!("{} {}", quoted.join(", "), if quoted.len() == 1 { "does not hold" } else { "do not hold" })
            }
            false => joined_names(&names),
        };
        if detail.is_empty() {
            out.push_str(&format!("FAILED: {names}\n"));
        } else {
            out.push_str(&format!("FAILED: {names}: {detail}\n"));
        }
    }
}

/// Whether a check's name states what must hold (`every timed total is
/// within the bound`), rather than naming a case (`n = 611`, `partials`).
fn is_claim(name: &str) -> bool {
    name.contains(' ') && !name.contains(" = ")
}

/// `n = 1, 31, 611` for checks named `n = 1`, `n = 31`, `n = 611`; other
/// names joined as they are.
fn joined_names(names: &[&str]) -> String {
    let key = names[0].split_once(" = ").map(|(k, _)| k);
    match key {
        Some(key) if names.iter().all(|n| n.starts_with(&format!("{key} = "))) => {
            format!("{key} = {}", names.iter().map(|n| &n[key.len() + 3..]).collect::<Vec<_>>().join(", "))
        }
        _ => names.join(", "),
    }
}

/// Ok when every check passed, else the count.
pub fn verdict(checks: &[Check]) -> Result<()> {
    match checks.iter().filter(|c| !c.pass()).count() {
        0 => Ok(()),
        failed => Err(Error::ChecksFailed { failed, total: checks.len() }),
    }
}

/// The overall status of a list of checks.
pub fn status(checks: &[Check]) -> Status {
    Status::of(checks.iter().all(Check::pass))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_render_in_plain_words() {
        let mut o = String::new();
        render(&mut o, &[Check::new("a", true, ""), Check::new("b", true, "")]);
        assert_eq!(o, "all 2 checks passed\n");
        let mut o = String::new();
        let checks = [Check::new("n = 1", false, ""), Check::new("n = 2", false, "NaN"), Check::new("n = 3", true, "")];
        render(&mut o, &checks);
        assert_eq!(o, "FAILED: n = 1\nFAILED: n = 2: NaN\n");
        assert_eq!(verdict(&checks).unwrap_err().to_string(), "2 checks of 3 failed (listed above)");
    }

    #[test]
    fn a_failure_shared_by_several_checks_is_printed_once_with_all_their_names() {
        let race = "data race on partials[1]: block 1 wrote it";
        let checks = [
            Check::new("n = 31", true, ""),
            Check::new("n = 611", false, race),
            Check::new("n = 1024", false, "wrong sum"),
            Check::new("n = 4096", false, race),
            Check::new("partials", false, race),
        ];
        let mut o = String::new();
        render(&mut o, &checks);
        assert_eq!(o, format!("FAILED: n = 611, n = 4096, partials: {race}\nFAILED: n = 1024: wrong sum\n"));
        let mut o = String::new();
        render(&mut o, &checks[..4]);
        assert_eq!(o, format!("FAILED: n = 611, 4096: {race}\nFAILED: n = 1024: wrong sum\n"));
        assert_eq!(o.matches(race).count(), 1);
    }

    #[test]
    fn a_failed_check_named_by_what_must_hold_is_not_stated_as_if_it_held() {
        let mut o = String::new();
        let within = "the cooperative sum is within its bound";
        render(&mut o, &[Check::new(within, false, "error 4.00e1, bound 3.15e1"), Check::new("n = 611", false, "wrong sum")]);
        assert_eq!(o, "FAILED: \"the cooperative sum is within its bound\" does not hold: error 4.00e1, bound 3.15e1\nFAILED: n = 611: wrong sum\n");
        assert!(!o.contains(&format!("FAILED: {within}")), "{o}");
        let mut o = String::new();
        render(
            &mut o,
            &[
                Check::new("every timed total is within the bound", false, "1 of 10 outside"),
                Check::new("the graph total is the sum of its partials", false, "1 of 10 outside"),
            ],
        );
        assert_eq!(o, "FAILED: \"every timed total is within the bound\", \"the graph total is the sum of its partials\" do not hold: 1 of 10 outside\n");
    }
}
