//! The PTX scanner: which entries of a PTX module may reach `grid.sync()`,
//! read from the text once per module. A kernel that calls it must be
//! declared cooperative, and the launcher refuses one that is not
//! (`Error::UndeclaredGridSync`) before any launch can hang.

/// What a PTX `call` line calls: `call.uni (retval0), f, (param0);` or
/// `call.uni f, ();` name `f`; `call.uni (retval0), %rd5, (param0), prototype_0;`
/// calls through a register.
#[derive(Debug, PartialEq)]
enum Callee {
    Named(String),
    Indirect,
}

fn callee(line: &str) -> Option<Callee> {
    let rest = line.trim_start().strip_prefix("call")?;
    if !rest.starts_with(['.', ' ', '\t']) {
        return None;
    }
    let rest = rest.trim_start_matches(|c: char| c == '.' || c.is_ascii_alphanumeric()).trim_start();
    let rest = match rest.strip_prefix('(') {
        Some(r) => r.split_once(')')?.1.trim_start().strip_prefix(',')?.trim_start(),
        None => rest,
    };
    if rest.starts_with('%') {
        return Some(Callee::Indirect);
    }
    let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$').collect();
    (!name.is_empty()).then_some(Callee::Named(name))
}

/// The name a `.func` header line declares, with or without a return
/// value: `.func f(`, `.visible .func (.param .b32 func_retval0) f(`.
fn func_name(line: &str) -> Option<&str> {
    let rest = line.split_once(".func")?.1.trim_start();
    let rest = match rest.strip_prefix('(') {
        Some(r) => r.split_once(')')?.1.trim_start(),
        None => rest,
    };
    let name = rest.split(['(', ' ', '\t']).next()?;
    (!name.is_empty()).then_some(name)
}

/// The body, braces excluded, of the function whose header starts at `start` in `ptx`.
fn body_from(ptx: &str, start: usize) -> Option<&str> {
    let open = start + ptx[start..].find('{')?;
    let mut depth = 0;
    for (i, c) in ptx[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&ptx[open..open + i]);
                }
            }
            _ => {}
        }
    }
    None
}

/// A PTX module's functions, read once: for each entry and `.func`, whether
/// its body holds the mark `grid.sync()` leaves (`arch::mark_grid_sync`),
/// what it calls by name, and whether it calls through a register (where
/// the callee cannot be read and is taken to sync).
pub(crate) struct PtxIndex {
    functions: std::collections::HashMap<String, PtxFunction>,
}

#[derive(Default)]
struct PtxFunction {
    marked: bool,
    indirect: bool,
    calls: Vec<String>,
}

impl PtxIndex {
    pub(crate) fn new(ptx: &str) -> PtxIndex {
        let mut functions = std::collections::HashMap::new();
        let mut at = 0;
        while let Some(found) = ptx[at..].find(['.']) {
            let start = at + found;
            at = start + 1;
            let line_start = ptx[..start].rfind('\n').map_or(0, |l| l + 1);
            let line_end = ptx[start..].find('\n').map_or(ptx.len(), |e| start + e);
            let line = &ptx[line_start..line_end];
            let name = if ptx[start..].starts_with(".entry ") {
                line.split_once(".entry ").and_then(|(_, r)| r.split(['(', ' ', '\t']).next())
            } else if ptx[start..].starts_with(".func") && !line.trim_end().ends_with(';') {
                func_name(line)
            } else {
                continue;
            };
            let (Some(name), Some(body)) = (name, body_from(ptx, line_start)) else { continue };
            let mut f = PtxFunction { marked: body.contains("cg::grid_group::sync"), ..Default::default() };
            for c in body.lines().filter_map(callee) {
                match c {
                    Callee::Indirect => f.indirect = true,
                    Callee::Named(n) => f.calls.push(n),
                }
            }
            functions.insert(name.to_string(), f);
            at = line_end;
        }
        PtxIndex { functions }
    }

    /// Whether entry `name`, or any function it calls, may call `grid.sync()`.
    pub(crate) fn calls_grid_sync(&self, name: &str) -> bool {
        let mut seen = std::collections::HashSet::new();
        let mut todo = vec![name];
        while let Some(f) = todo.pop() {
            if !seen.insert(f) {
                continue;
            }
            let Some(func) = self.functions.get(f) else { continue };
            if func.marked || func.indirect {
                return true;
            }
            todo.extend(func.calls.iter().map(String::as_str));
        }
        false
    }
}

/// Whether entry `name` of `ptx`, or any function it calls, may call
/// `grid.sync()`: it holds the mark `grid.sync()` leaves, or calls through
/// a register, where the callee cannot be read and is taken to sync. A
/// launcher loading a kernel of the program's own PTX asks this once per
/// module for all its entries; this function reads `ptx` on each call.
pub fn ptx_calls_grid_sync(ptx: &str, name: &str) -> bool {
    ptx.contains(&format!(".entry {name}(")) && PtxIndex::new(ptx).calls_grid_sync(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grid_sync_inside_a_called_function_is_found() {
        let ptx = ".func helper(\n)\n{\n\t// cg::grid_group::sync\n\tret;\n}\n.visible .entry k(\n)\n{\n\tcall.uni helper, ();\n\tret;\n}\n";
        assert!(ptx_calls_grid_sync(ptx, "k"));
        assert!(!ptx_calls_grid_sync(ptx, "other"));
        let named = |f: &str| Some(Callee::Named(f.to_string()));
        assert_eq!(callee("\tcall.uni (retval0), _ZN3gpu2cg4sync17h0123E, (param0, param1);"), named("_ZN3gpu2cg4sync17h0123E"));
        assert_eq!(callee("\tcall.uni helper, ();"), named("helper"));
        assert_eq!(callee("\tcall.uni (retval0), %rd5, (param0), prototype_0;"), Some(Callee::Indirect));
        assert_eq!(callee("\tadd.s32 %r1, %r2, %r3;"), None);
        assert_eq!(callee("\tcallseq_end;"), None);
    }

    #[test]
    fn a_grid_sync_inside_a_function_that_returns_a_value_is_found() {
        // rustc writes a function with a result as `.func (.param .b32 func_retval0) NAME(`.
        let ptx = ".func  (.param .b32 func_retval0) helper(\n\t.param .b64 helper_param_0\n)\n{\n\t// cg::grid_group::sync\n\tret;\n}\n\
                   .visible .entry k(\n)\n{\n\tcall.uni (retval0), helper, (param0);\n\tret;\n}\n";
        assert!(ptx_calls_grid_sync(ptx, "k"));
        assert_eq!(func_name(".func  (.param .b32 func_retval0) helper("), Some("helper"));
        assert_eq!(func_name(".visible .func helper2("), Some("helper2"));
    }

    #[test]
    fn a_call_through_a_register_is_taken_to_sync() {
        let ptx = ".visible .entry k(\n)\n{\n\tcall.uni (retval0), %rd5, (param0), prototype_0;\n\tret;\n}\n";
        assert!(ptx_calls_grid_sync(ptx, "k"));
    }
}
