//! `#[kernel(launch_bounds(max, min))]` in the PTX, where nvcc puts `__launch_bounds__`.

/// The PTX with each `#[kernel(launch_bounds(max, min))]` applied: the
/// macro's global `__launch_bounds__<name>` (two little-endian u32, which
/// the PTX lists as bytes, trailing zeros left out) is removed, and every
/// entry of that kernel (`name`, `name__watched`) gets `.maxntid max, 1, 1`
/// and `.minnctapersm min` between its parameters and its body, where
/// nvcc writes `__launch_bounds__`.
pub fn with_launch_bounds(ptx: &str) -> Result<String, String> {
    const PREFIX: &str = ".visible .global .align 4 .b8 __launch_bounds__";
    let mut bounds = Vec::new();
    let mut kept = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        let Some(rest) = line.strip_prefix(PREFIX) else {
            kept.push_str(line);
            continue;
        };
        let bad = || format!("unreadable line: {}", line.trim_end());
        let (name, rest) = rest.split_once("[8]").ok_or_else(bad)?;
        let list = rest.split_once('{').and_then(|(_, r)| r.split_once('}')).map(|(l, _)| l).ok_or_else(bad)?;
        let mut bytes = [0u8; 8];
        for (i, b) in list.split(',').enumerate() {
            *bytes.get_mut(i).ok_or_else(bad)? = b.trim().parse().map_err(|_| bad())?;
        }
        let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        bounds.push((name.to_string(), word(0), word(4)));
    }
    for (name, max, min) in bounds {
        let mut directives = format!(".maxntid {max}, 1, 1\n");
        if min > 0 {
            directives.push_str(&format!(".minnctapersm {min}\n"));
        }
        let mut found = 0;
        for entry in [name.clone(), format!("{name}__watched")] {
            let Some(start) = kept.find(&format!(".entry {entry}(\n")) else { continue };
            let body = start + kept[start..].find("\n)\n{").ok_or_else(|| format!("no body after .entry {entry}"))? + 3;
            kept.insert_str(body, &directives);
            found += 1;
        }
        if found == 0 {
            return Err(format!("no .entry {name} for its launch bounds"));
        }
    }
    // A marker this pass did not read (LLVM printed it another way) would
    // leave a kernel without the bounds its source declares.
    if let Some(line) = kept.lines().find(|l| l.contains("__launch_bounds__")) {
        return Err(format!("a marker was left unread, so its kernel would lose its bounds: {}", line.trim()));
    }
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = ".visible .global .align 4 .b8 __launch_bounds__scan[8] = {0, 1, 0, 0, 8};\n\
        .visible .entry scan(\n\t.param .u64 scan_param_0\n)\n{\n\tret;\n}\n\
        .visible .entry scan__watched(\n\t.param .u64 scan__watched_param_0\n)\n{\n\tret;\n}\n";

    #[test]
    fn both_entries_get_the_bounds_and_the_marker_goes() {
        let out = with_launch_bounds(PTX).unwrap();
        assert!(!out.contains("__launch_bounds__"), "{out}");
        assert_eq!(out.matches(".maxntid 256, 1, 1\n.minnctapersm 8\n").count(), 2, "{out}");
        assert!(out.contains(")\n.maxntid 256, 1, 1\n.minnctapersm 8\n{"), "between the parameters and the body: {out}");
    }

    #[test]
    fn a_marker_without_its_entry_is_an_error() {
        let ptx = PTX.replace(".entry scan(", ".entry other(").replace(".entry scan__watched(", ".entry other2(");
        assert_eq!(with_launch_bounds(&ptx).unwrap_err(), "no .entry scan for its launch bounds");
    }

    #[test]
    fn ptx_without_bounds_is_unchanged() {
        let ptx = ".visible .entry k(\n)\n{\n\tret;\n}\n";
        assert_eq!(with_launch_bounds(ptx).unwrap(), ptx);
    }
}
