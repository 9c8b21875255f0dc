//! A line diff, printed as `diff -u` prints one, for the lines a check found.

/// One step from the old lines to the new.
#[derive(Debug, PartialEq, Clone, Copy)]
enum Step {
    Same(usize, usize),
    Removed(usize),
    Added(usize),
}

/// The steps of a shortest edit from `old` to `new` (a longest common
/// subsequence, found on what lies between their common start and end).
fn steps(old: &[&str], new: &[&str]) -> Vec<Step> {
    let start = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let end = old[start..].iter().rev().zip(new[start..].iter().rev()).take_while(|(a, b)| a == b).count();
    let (a, b) = (&old[start..old.len() - end], &new[start..new.len() - end]);
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let mut steps: Vec<Step> = (0..start).map(|k| Step::Same(k, k)).collect();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            steps.push(Step::Same(start + i, start + j));
            (i, j) = (i + 1, j + 1);
        } else if j == b.len() || (i < a.len() && lcs[i + 1][j] >= lcs[i][j + 1]) {
            steps.push(Step::Removed(start + i));
            i += 1;
        } else {
            steps.push(Step::Added(start + j));
            j += 1;
        }
    }
    steps.extend((0..end).map(|k| Step::Same(old.len() - end + k, new.len() - end + k)));
    steps
}

/// The hunks of a unified diff from `old` to `new`, `context` unchanged
/// lines around each change; empty when they are the same.
pub fn unified(old: &[&str], new: &[&str], context: usize) -> Vec<String> {
    let steps = steps(old, new);
    let changed: Vec<usize> = steps.iter().enumerate().filter(|(_, s)| !matches!(s, Step::Same(..))).map(|(k, _)| k).collect();
    let mut out = Vec::new();
    let mut k = 0;
    while k < changed.len() {
        // A hunk: changes no more than 2 * context unchanged lines apart.
        let first = changed[k];
        let mut last = first;
        while k + 1 < changed.len() && changed[k + 1] - last <= 2 * context + 1 {
            k += 1;
            last = changed[k];
        }
        k += 1;
        let from = first.saturating_sub(context);
        let to = (last + context + 1).min(steps.len());
        let hunk = &steps[from..to];
        // Lines of each side before the hunk, and in it.
        let old_before = steps[..from].iter().filter(|s| !matches!(s, Step::Added(_))).count();
        let new_before = steps[..from].iter().filter(|s| !matches!(s, Step::Removed(_))).count();
        let old_count = hunk.iter().filter(|s| !matches!(s, Step::Added(_))).count();
        let new_count = hunk.iter().filter(|s| !matches!(s, Step::Removed(_))).count();
        // diff -u numbers lines from 1, and an empty side by the line before it.
        let line = |before: usize, count: usize| if count == 0 { before } else { before + 1 };
        out.push(format!("@@ -{},{old_count} +{},{new_count} @@", line(old_before, old_count), line(new_before, new_count)));
        for step in hunk {
            out.push(match *step {
                Step::Same(i, _) => format!(" {}", old[i]),
                Step::Removed(i) => format!("-{}", old[i]),
                Step::Added(j) => format!("+{}", new[j]),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_lines_have_no_diff() {
        assert!(unified(&["a", "b"], &["a", "b"], 2).is_empty());
    }

    #[test]
    fn an_added_and_a_removed_line_show_with_their_context() {
        let old = ["a", "b", "c", "d", "e", "f", "g", "h"];
        let new = ["a", "b", "c", "x", "d", "e", "f", "h"];
        let diff = unified(&old, &new, 1);
        assert_eq!(diff, ["@@ -3,2 +3,3 @@", " c", "+x", " d", "@@ -6,3 +7,2 @@", " f", "-g", " h"]);
    }

    #[test]
    fn changes_close_together_share_one_hunk() {
        let diff = unified(&["a", "b", "c"], &["x", "b", "y"], 1);
        assert_eq!(diff, ["@@ -1,3 +1,3 @@", "-a", "+x", " b", "-c", "+y"]);
    }
}
