//! Words the program's messages share: counts with their nouns, lists of GPUs.

use std::fmt::Display;

/// `n` and the noun for it: `1 SM`, `40 SMs`.
pub fn plural<N: Display + PartialEq + From<u8>>(n: N, one: &str, many: &str) -> String {
    let noun = if n == N::from(1) { one } else { many };
    format!("{n} {noun}")
}

/// `a`, `a and b`, `a, b and c`.
pub fn listed<S: AsRef<str>>(items: &[S]) -> String {
    match items {
        [] => String::new(),
        [one] => one.as_ref().to_string(),
        [rest @ .., last] => format!("{} and {}", rest.iter().map(|s| s.as_ref()).collect::<Vec<_>>().join(", "), last.as_ref()),
    }
}

/// `1 block/SM x 1 SM`, `4 blocks/SM x 40 SMs`: a cooperative ceiling's two factors.
pub fn per_sm_times_sms(blocks_per_sm: u32, sms: u32) -> String {
    format!("{} x {}", plural(blocks_per_sm, "block/SM", "blocks/SM"), plural(sms, "SM", "SMs"))
}

/// `GPU 1`, `GPUs 1 and 3`, `GPUs 1, 2 and 3`.
pub fn gpus_named(ranks: &[u32]) -> String {
    let names: Vec<String> = ranks.iter().map(u32::to_string).collect();
    match names.as_slice() {
        [] => "no GPU".to_string(),
        [one] => format!("GPU {one}"),
        [rest @ .., last] => format!("GPUs {} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(plural(1u32, "SM", "SMs"), "1 SM");
        assert_eq!(plural(0usize, "check", "checks"), "0 checks");
        assert_eq!(plural(40u64, "warm-up", "warm-ups"), "40 warm-ups");
    }

    #[test]
    fn lists_and_ceilings_read_as_sentences() {
        assert_eq!(listed::<&str>(&[]), "");
        assert_eq!(listed(&["--rank"]), "--rank");
        assert_eq!(listed(&["--nccl-id", "--rank", "--ranks"]), "--nccl-id, --rank and --ranks");
        assert_eq!(per_sm_times_sms(1, 1), "1 block/SM x 1 SM");
        assert_eq!(per_sm_times_sms(4, 40), "4 blocks/SM x 40 SMs");
    }

    #[test]
    fn gpus_are_listed_as_a_sentence_names_them() {
        assert_eq!(gpus_named(&[]), "no GPU");
        assert_eq!(gpus_named(&[1]), "GPU 1");
        assert_eq!(gpus_named(&[1, 3]), "GPUs 1 and 3");
        assert_eq!(gpus_named(&[1, 2, 3]), "GPUs 1, 2 and 3");
    }
}
