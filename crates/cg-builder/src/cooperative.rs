//! A kernel declared `#[kernel(cooperative)]` whose PTX never reaches a
//! grid barrier: a warning at build time. Such a kernel works, but the
//! cooperative launch it gets buys nothing and costs it any grid larger
//! than the GPU holds at once; an ordinary kernel would do.

/// The mark `grid.sync()` leaves in the PTX (`cg_kernel::arch`'s comment).
const GRID_SYNC_MARK: &str = "// cg::grid_group::sync";

/// The entries of `ptx` declared cooperative (they have a `name__watched`
/// twin, which `#[kernel(cooperative)]` alone emits) whose own body neither
/// holds the mark of a grid barrier nor calls a function (where the
/// barrier could be): certainly no `grid.sync()`. A body that calls
/// something is given the benefit of the doubt.
pub(crate) fn cooperative_without_grid_sync(ptx: &str) -> Vec<String> {
    let entries: Vec<&str> = ptx.lines().filter_map(|l| l.split(".entry ").nth(1)).filter_map(|rest| rest.split('(').next()).map(str::trim).collect();
    entries
        .iter()
        .filter_map(|e| e.strip_suffix("__watched"))
        .filter(|base| entries.contains(base))
        .filter(|base| {
            let body = entry_body(ptx, base);
            !body.contains(GRID_SYNC_MARK) && !body.lines().any(|l| l.trim_start().starts_with("call"))
        })
        .map(str::to_string)
        .collect()
}

/// The text of entry `name`'s body: from its `.entry` line to the first
/// line that is a lone `}`.
fn entry_body<'a>(ptx: &'a str, name: &str) -> &'a str {
    let Some(start) = ptx.find(&format!(".entry {name}(")) else { return "" };
    let rest = &ptx[start..];
    let end = rest.find("\n}\n").map_or(rest.len(), |e| e + 3);
    &rest[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, body: &str) -> String {
        format!(".visible .entry {name}(\n\t.param .u64 {name}_param_0\n)\n{{\n{body}\n\tret;\n}}\n")
    }

    #[test]
    fn a_cooperative_entry_with_no_grid_barrier_and_no_call_is_named() {
        let ptx = [
            entry("sums", "\tadd.s32 %r1, %r2, %r3;\n\t// cg::grid_group::sync\n\tbar.sync 0;"),
            entry("sums__watched", "\t// cg::grid_group::sync"),
            entry("forgot", "\tadd.s32 %r1, %r2, %r3;"),
            entry("forgot__watched", "\tadd.s32 %r1, %r2, %r3;"),
            entry("helps", "\tcall.uni helper, ();"),
            entry("helps__watched", "\tcall.uni helper, ();"),
            entry("ordinary", "\tadd.s32 %r1, %r2, %r3;"),
        ]
        .concat();
        assert_eq!(cooperative_without_grid_sync(&ptx), ["forgot"]);
    }
}
