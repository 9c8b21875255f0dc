//! Types, bounds and signatures from rustdoc's JSON, written back as Rust.
//!
//! A path is written as its full, public name (`core::option::Option`, not
//! the `Option` the source happened to import), so that the listing changes
//! when the API does and not when an import does. A kind of type this does
//! not know is written `_`: the listing stays readable on a newer rustdoc.

use serde_json::Value;
use std::collections::HashMap;

/// Writes types and paths by the names a user of the crate would write.
pub struct Names<'a> {
    /// rustdoc's `paths`: every item the crate names, by id, with its path.
    paths: &'a Value,
    /// The shortest public path of each of the crate's own items.
    public: &'a HashMap<String, String>,
    /// The public paths of the other listed crates' items, by the path
    /// rustdoc gives them (`cg_emulator::spec::Device` is
    /// `cg_emulator::Device`): a private module moved in one crate
    /// changes no line of another's listing.
    others: &'a HashMap<String, String>,
}

impl<'a> Names<'a> {
    /// Names by `krate`'s own `paths` table, the crate's public paths and
    /// the other crates'.
    pub fn new(krate: &'a Value, public: &'a HashMap<String, String>, others: &'a HashMap<String, String>) -> Self {
        Names { paths: &krate["paths"], public, others }
    }

    /// Whether the crate's item `id` has a public path (a type with one has
    /// its trait impls listed with it).
    pub fn has_public_path(&self, id: &str) -> bool {
        self.public.contains_key(id)
    }

    /// An item's full name: its public path in this crate, else rustdoc's
    /// path for it, else the path as the source wrote it.
    fn path(&self, id: &Value, written: &str) -> String {
        let key = id_key(id);
        if let Some(public) = self.public.get(&key) {
            return public.clone();
        }
        match self.paths[&key]["path"].as_array() {
            Some(segments) => self.external(&segments.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("::")),
            None => written.trim_start_matches("$crate::").to_string(),
        }
    }

    /// Another crate's item by its public path, if it is one of the listed
    /// crates, else by the path rustdoc gives it.
    pub fn external(&self, path: &str) -> String {
        self.others.get(path).cloned().unwrap_or_else(|| path.to_string())
    }

    /// A `Path`: an item's name and its generic arguments.
    pub fn path_with_args(&self, path: &Value) -> String {
        let name = self.path(&path["id"], path["path"].as_str().unwrap_or("_"));
        format!("{name}{}", self.generic_args(&path["args"]))
    }

    /// `<'a, T, N = 3>`, `(A, B) -> C`, or nothing.
    fn generic_args(&self, args: &Value) -> String {
        if let Some(angle) = args.get("angle_bracketed") {
            let mut parts: Vec<String> = angle["args"].as_array().into_iter().flatten().map(|a| self.generic_arg(a)).collect();
            for c in angle["constraints"].as_array().into_iter().flatten() {
                let name = format!("{}{}", c["name"].as_str().unwrap_or("_"), self.generic_args(&c["args"]));
                let binding = &c["binding"];
                if let Some(eq) = binding.get("equality") {
                    parts.push(format!("{name} = {}", self.term(eq)));
                } else if let Some(bounds) = binding.get("constraint") {
                    parts.push(format!("{name}: {}", self.bounds(bounds)));
                }
            }
            return if parts.is_empty() { String::new() } else { format!("<{}>", parts.join(", ")) };
        }
        if let Some(paren) = args.get("parenthesized") {
            let inputs: Vec<String> = paren["inputs"].as_array().into_iter().flatten().map(|t| self.ty(t)).collect();
            return format!("({}){}", inputs.join(", "), self.output(&paren["output"]));
        }
        if args.as_str() == Some("return_type_notation") {
            return "(..)".to_string();
        }
        String::new()
    }

    fn generic_arg(&self, arg: &Value) -> String {
        if let Some(l) = arg.get("lifetime").and_then(Value::as_str) {
            l.to_string()
        } else if let Some(t) = arg.get("type") {
            self.ty(t)
        } else if let Some(c) = arg.get("const") {
            constant(c)
        } else {
            "_".to_string()
        }
    }

    /// The right side of `Name = ...` in a constraint: a type or a constant.
    fn term(&self, term: &Value) -> String {
        if let Some(t) = term.get("type") {
            self.ty(t)
        } else if let Some(c) = term.get("constant") {
            constant(c)
        } else {
            "_".to_string()
        }
    }

    /// ` -> T`, or nothing for `()`.
    fn output(&self, output: &Value) -> String {
        if output.is_null() { String::new() } else { format!(" -> {}", self.ty(output)) }
    }

    /// A type as Rust writes it; `_` for a kind this does not know.
    pub fn ty(&self, ty: &Value) -> String {
        let Some((kind, inner)) = ty.as_object().and_then(|o| o.iter().next()) else {
            return "_".to_string();
        };
        match kind.as_str() {
            "resolved_path" => self.path_with_args(inner),
            "primitive" if inner.as_str() == Some("never") => "!".to_string(),
            "generic" | "primitive" => inner.as_str().unwrap_or("_").to_string(),
            "borrowed_ref" => {
                let lifetime = inner["lifetime"].as_str().map(|l| format!("{l} ")).unwrap_or_default();
                let mutable = if inner["is_mutable"].as_bool() == Some(true) { "mut " } else { "" };
                format!("&{lifetime}{mutable}{}", self.ty(&inner["type"]))
            }
            "raw_pointer" => {
                let mutable = if inner["is_mutable"].as_bool() == Some(true) { "mut" } else { "const" };
                format!("*{mutable} {}", self.ty(&inner["type"]))
            }
            "slice" => format!("[{}]", self.ty(inner)),
            "array" => format!("[{}; {}]", self.ty(&inner["type"]), inner["len"].as_str().unwrap_or("_")),
            "tuple" => {
                let items: Vec<String> = inner.as_array().into_iter().flatten().map(|t| self.ty(t)).collect();
                if items.len() == 1 { format!("({},)", items[0]) } else { format!("({})", items.join(", ")) }
            }
            "impl_trait" => format!("impl {}", self.bounds(inner)),
            "dyn_trait" => {
                let mut parts: Vec<String> = inner["traits"].as_array().into_iter().flatten().map(|p| self.poly_trait(p)).collect();
                if let Some(l) = inner["lifetime"].as_str() {
                    parts.push(l.to_string());
                }
                format!("dyn {}", parts.join(" + "))
            }
            "qualified_path" => {
                let name = format!("{}{}", inner["name"].as_str().unwrap_or("_"), self.generic_args(&inner["args"]));
                let self_type = self.ty(&inner["self_type"]);
                match inner.get("trait").filter(|t| !t.is_null()) {
                    Some(t) => format!("<{self_type} as {}>::{name}", self.path_with_args(t)),
                    None => format!("{self_type}::{name}"),
                }
            }
            "function_pointer" => {
                let binder = self.binder(&inner["generic_params"]);
                format!("{binder}{}fn{}", header(&inner["header"]), self.inputs_and_output(&inner["sig"]))
            }
            "pat" => self.ty(&inner["type"]),
            _ => "_".to_string(),
        }
    }

    /// `for<'a> Trait<'a>` from a `PolyTrait`.
    fn poly_trait(&self, poly: &Value) -> String {
        format!("{}{}", self.binder(&poly["generic_params"]), self.path_with_args(&poly["trait"]))
    }

    /// `for<'a, 'b> `, or nothing.
    fn binder(&self, params: &Value) -> String {
        let params: Vec<String> = params.as_array().into_iter().flatten().filter_map(|p| self.param(p)).collect();
        if params.is_empty() { String::new() } else { format!("for<{}> ", params.join(", ")) }
    }

    /// `A + ?Sized + 'a` from a list of generic bounds.
    pub fn bounds(&self, bounds: &Value) -> String {
        let parts: Vec<String> = bounds.as_array().into_iter().flatten().map(|b| self.bound(b)).collect();
        parts.join(" + ")
    }

    fn bound(&self, bound: &Value) -> String {
        if let Some(t) = bound.get("trait_bound") {
            let modifier = match t["modifier"].as_str() {
                Some("maybe") => "?",
                Some("maybe_const") => "~const ",
                _ => "",
            };
            format!("{}{modifier}{}", self.binder(&t["generic_params"]), self.path_with_args(&t["trait"]))
        } else if let Some(l) = bound.get("outlives").and_then(Value::as_str) {
            l.to_string()
        } else if let Some(captured) = bound.get("use").and_then(Value::as_array) {
            let names: Vec<String> = captured
                .iter()
                .map(|c| match c {
                    Value::String(s) => s.clone(),
                    Value::Object(o) => o.values().next().and_then(Value::as_str).unwrap_or("_").to_string(),
                    _ => "_".to_string(),
                })
                .collect();
            format!("use<{}>", names.join(", "))
        } else {
            "_".to_string()
        }
    }

    /// One generic parameter as declared (`T: Copy = u8`, `'a: 'b`,
    /// `const N: usize`); none for the parameter an `impl Trait` argument
    /// makes, which its type already shows.
    fn param(&self, param: &Value) -> Option<String> {
        let name = param["name"].as_str().unwrap_or("_");
        let kind = &param["kind"];
        if let Some(l) = kind.get("lifetime") {
            let outlives: Vec<&str> = l["outlives"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            return Some(if outlives.is_empty() { name.to_string() } else { format!("{name}: {}", outlives.join(" + ")) });
        }
        if let Some(t) = kind.get("type") {
            if t["is_synthetic"].as_bool() == Some(true) {
                return None;
            }
            let mut s = name.to_string();
            let bounds = self.bounds(&t["bounds"]);
            if !bounds.is_empty() {
                s += &format!(": {bounds}");
            }
            if !t["default"].is_null() {
                s += &format!(" = {}", self.ty(&t["default"]));
            }
            return Some(s);
        }
        if let Some(c) = kind.get("const") {
            let default = c["default"].as_str().map(|d| format!(" = {d}")).unwrap_or_default();
            return Some(format!("const {name}: {}{default}", self.ty(&c["type"])));
        }
        Some(name.to_string())
    }

    /// `<'a, T: Copy>`, or nothing.
    pub fn params(&self, generics: &Value) -> String {
        let params: Vec<String> = generics["params"].as_array().into_iter().flatten().filter_map(|p| self.param(p)).collect();
        if params.is_empty() { String::new() } else { format!("<{}>", params.join(", ")) }
    }

    /// The bounds of `generics` as where-predicates: its parameters' bounds
    /// (`T: Pod`) then its where-clause. For the impl a method is in, whose
    /// parameters are not the method's but whose bounds it carries.
    pub fn bounds_as_predicates(&self, generics: &Value) -> Vec<String> {
        let mut predicates = Vec::new();
        for param in generics["params"].as_array().into_iter().flatten() {
            let name = param["name"].as_str().unwrap_or("_");
            let kind = &param["kind"];
            if let Some(t) = kind.get("type") {
                let bounds = self.bounds(&t["bounds"]);
                if !bounds.is_empty() && t["is_synthetic"].as_bool() != Some(true) {
                    predicates.push(format!("{name}: {bounds}"));
                }
            } else if let Some(l) = kind.get("lifetime") {
                let outlives: Vec<&str> = l["outlives"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                if !outlives.is_empty() {
                    predicates.push(format!("{name}: {}", outlives.join(" + ")));
                }
            }
        }
        predicates.extend(self.predicates(generics));
        predicates
    }

    /// The where-clause of `generics`, one string per predicate.
    pub fn predicates(&self, generics: &Value) -> Vec<String> {
        let mut out = Vec::new();
        for p in generics["where_predicates"].as_array().into_iter().flatten() {
            if let Some(b) = p.get("bound_predicate") {
                out.push(format!("{}{}: {}", self.binder(&b["generic_params"]), self.ty(&b["type"]), self.bounds(&b["bounds"])));
            } else if let Some(l) = p.get("lifetime_predicate") {
                let outlives: Vec<&str> = l["outlives"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                out.push(format!("{}: {}", l["lifetime"].as_str().unwrap_or("_"), outlives.join(" + ")));
            } else if let Some(e) = p.get("eq_predicate") {
                out.push(format!("{} = {}", self.ty(&e["lhs"]), self.term(&e["rhs"])));
            } else {
                out.push("_".to_string());
            }
        }
        out
    }

    /// `(&self, n: usize) -> T` from a function's `sig`.
    pub fn inputs_and_output(&self, sig: &Value) -> String {
        let mut inputs: Vec<String> = sig["inputs"].as_array().into_iter().flatten().map(|pair| self.input(pair)).collect();
        if sig["is_c_variadic"].as_bool() == Some(true) {
            inputs.push("...".to_string());
        }
        format!("({}){}", inputs.join(", "), self.output(&sig["output"]))
    }

    /// One parameter: `self`, `&mut self` and `&'a self` as Rust writes
    /// them, others `name: Type` (a function pointer's unnamed ones `Type`).
    fn input(&self, pair: &Value) -> String {
        let name = pair[0].as_str().unwrap_or("_");
        let ty = &pair[1];
        if name == "self" {
            if ty["generic"].as_str() == Some("Self") {
                return "self".to_string();
            }
            if let Some(r) = ty.get("borrowed_ref").filter(|r| r["type"]["generic"].as_str() == Some("Self")) {
                let lifetime = r["lifetime"].as_str().map(|l| format!("{l} ")).unwrap_or_default();
                let mutable = if r["is_mutable"].as_bool() == Some(true) { "mut " } else { "" };
                return format!("&{lifetime}{mutable}self");
            }
        }
        if name == "_" { self.ty(ty) } else { format!("{name}: {}", self.ty(ty)) }
    }
}

/// The qualifiers before `fn`: `const unsafe extern "C" `.
pub fn header(header: &Value) -> String {
    let mut s = String::new();
    for (flag, word) in [("is_const", "const "), ("is_async", "async "), ("is_unsafe", "unsafe ")] {
        if header[flag].as_bool() == Some(true) {
            s += word;
        }
    }
    let abi = &header["abi"];
    match abi {
        Value::String(name) if name == "Rust" => {}
        Value::String(name) => s += &format!("extern \"{name}\" "),
        Value::Object(o) => {
            if let Some((name, detail)) = o.iter().next() {
                let unwind = if detail["unwind"].as_bool() == Some(true) { "-unwind" } else { "" };
                s += &format!("extern \"{name}{unwind}\" ");
            }
        }
        _ => {}
    }
    s
}

/// A constant generic argument: its written expression.
fn constant(c: &Value) -> String {
    c["expr"].as_str().unwrap_or("_").to_string()
}

/// An id as the key rustdoc's maps use (ids are numbers in the items, strings as keys).
pub fn id_key(id: &Value) -> String {
    match id {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names_of(krate: &Value, public: &HashMap<String, String>, ty: Value) -> String {
        Names::new(krate, public, &HashMap::new()).ty(&ty)
    }

    #[test]
    fn paths_are_written_by_their_full_name_not_the_imported_one() {
        let krate = json!({ "paths": { "5": { "path": ["core", "option", "Option"], "kind": "enum" } } });
        let public = HashMap::from([("9".to_string(), "k::device::Gpu".to_string())]);
        let ty = json!({ "resolved_path": { "path": "Option", "id": 5, "args": { "angle_bracketed": {
            "args": [{ "type": { "borrowed_ref": { "lifetime": null, "is_mutable": false, "type": { "resolved_path": { "path": "Gpu", "id": 9, "args": null } } } } }],
            "constraints": [] } } } });
        assert_eq!(names_of(&krate, &public, ty), "core::option::Option<&k::device::Gpu>");
    }

    #[test]
    fn a_kind_of_type_it_does_not_know_is_written_as_an_underscore() {
        let krate = json!({ "paths": {} });
        let ty = json!({ "tuple": [{ "primitive": "u8" }, { "a_kind_from_a_later_rustdoc": 1 }] });
        assert_eq!(names_of(&krate, &HashMap::new(), ty), "(u8, _)");
    }

    #[test]
    fn pointers_slices_arrays_and_function_pointers_read_as_rust() {
        let krate = json!({ "paths": {} });
        let ty = json!({ "function_pointer": {
            "sig": { "inputs": [["_", { "raw_pointer": { "is_mutable": true, "type": { "slice": { "primitive": "f32" } } } }],
                                ["_", { "array": { "type": { "primitive": "u8" }, "len": "4" } }]],
                     "output": { "tuple": [] }, "is_c_variadic": false },
            "generic_params": [],
            "header": { "is_const": false, "is_unsafe": true, "is_async": false, "abi": { "C": { "unwind": false } } } } });
        assert_eq!(names_of(&krate, &HashMap::new(), ty), "unsafe extern \"C\" fn(*mut [f32], [u8; 4]) -> ()");
    }
}
