//! A crate's public items, one line each, from rustdoc's JSON.
//!
//! The walk starts at the crate root and follows what a user can name:
//! public modules, and re-exports to what they re-export. An item a user can
//! name by several paths is listed in full once, at its shortest path (one
//! the documentation shows, if it has one), and every other path is one
//! `pub use` line naming it. An item re-exported from another crate is one
//! `pub use` line too: its own crate's listing holds the rest. Items marked
//! `#[doc(hidden)]`, and everything under them, are listed and marked so:
//! hidden from the documentation, they are still callable by anyone.

use crate::render::{Names, header, id_key};
use serde_json::Value;
use std::collections::{HashMap, HashSet};

/// What a walk of a crate found: every path to every public item, and the
/// path each item is listed in full at.
struct Analysis {
    entries: Vec<Entry>,
    globs: Vec<Glob>,
    /// By item id: the path the item is listed in full at.
    canonical: HashMap<String, Vec<String>>,
}

fn analyse(krate: &Value) -> Result<Analysis, String> {
    let index = krate["index"].as_object().ok_or("rustdoc's JSON has no `index`")?;
    let root = id_key(&krate["root"]);
    let root_item = index.get(&root).ok_or("rustdoc's JSON has no root module")?;
    let crate_name = root_item["name"].as_str().ok_or("the root module has no name")?.to_string();

    let mut walk = Walk { krate, entries: Vec::new(), globs: Vec::new(), stack: vec![root.clone()] };
    walk.entries.push(Entry {
        path: vec![crate_name.clone()],
        parent: Vec::new(),
        target: Target::Local(root.clone()),
        hidden: is_hidden(root_item),
        origin: Origin::Defined,
    });
    walk.module(&root, &[crate_name], is_hidden(root_item));

    // The path each item is listed in full at: one the documentation shows
    // before a hidden one, then the shortest, then the one it is declared
    // at, then the first in sort order.
    let mut best: HashMap<String, (bool, usize, bool, Vec<String>)> = HashMap::new();
    for entry in &walk.entries {
        if let Target::Local(id) = &entry.target {
            let candidate = (entry.hidden, entry.path.len(), entry.origin != Origin::Defined, entry.path.clone());
            if best.get(id).is_none_or(|old| candidate < *old) {
                best.insert(id.clone(), candidate);
            }
        }
    }
    let canonical = best.into_iter().map(|(id, (_, _, _, path))| (id, path)).collect();
    Ok(Analysis { entries: walk.entries, globs: walk.globs, canonical })
}

/// The public path of each of the crate's items, by the path rustdoc's
/// `paths` gives it (where it is declared): how another crate's JSON names
/// it.
pub fn public_paths(krate: &Value) -> Result<HashMap<String, String>, String> {
    let analysis = analyse(krate)?;
    let mut out = HashMap::new();
    for (id, path) in &analysis.canonical {
        if let Some(segments) = krate["paths"][id]["path"].as_array() {
            let declared = segments.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("::");
            out.insert(declared, path.join("::"));
        }
    }
    Ok(out)
}

/// The public items of the crate whose rustdoc JSON is `krate`, one line
/// each, sorted by path (an item just before its members). `others` holds
/// the public paths of the other listed crates' items ([`public_paths`]).
pub fn listing(krate: &Value, others: &HashMap<String, String>) -> Result<Vec<String>, String> {
    let Analysis { entries, globs, canonical } = analyse(krate)?;
    let index = krate["index"].as_object().ok_or("rustdoc's JSON has no `index`")?;
    let public: HashMap<String, String> = canonical.iter().map(|(id, path)| (id.clone(), path.join("::"))).collect();
    let names = Names::new(krate, &public, others);
    let mut out = Lines::default();

    // The modules listed in full. What a path through an alias of a module
    // leads to is listed where the module is, not again under the alias.
    let modules: HashSet<&[String]> = entries
        .iter()
        .filter(|e| matches!(&e.target, Target::Local(id) if canonical[id] == e.path && index[id]["inner"].get("module").is_some()))
        .map(|e| e.path.as_slice())
        .collect();
    let shown_module = |path: &[String]| modules.contains(path);
    for entry in &entries {
        if !entry.parent.is_empty() && !shown_module(&entry.parent) {
            continue;
        }
        match &entry.target {
            Target::External { kind, source } => {
                if entry.origin != Origin::Glob {
                    let source = names.external(source);
                    out.push(&entry.path, 0, format!("pub use {} = {kind} {source}{}", entry.path.join("::"), marks(None, entry.hidden)));
                }
            }
            Target::Local(id) if canonical[id] == entry.path => {
                let item = &index[id];
                item_lines(&names, index, item, &entry.path, entry.hidden, &mut out);
            }
            Target::Local(id) => {
                if entry.origin != Origin::Glob {
                    let item = &index[id];
                    let line = format!("pub use {} = {} {}", entry.path.join("::"), kind_word(item), public[id]);
                    out.push(&entry.path, 0, format!("{line}{}", marks(None, entry.hidden)));
                }
            }
        }
    }
    for glob in &globs {
        if shown_module(&glob.module) {
            let source = match &glob.target {
                Target::Local(id) => public.get(id).cloned().unwrap_or_else(|| glob.written.clone()),
                Target::External { source, .. } => names.external(source),
            };
            let kind = match &glob.target {
                Target::Local(id) => kind_word(&index[id]).to_string(),
                Target::External { kind, .. } => kind.clone(),
            };
            let mut key = glob.module.clone();
            key.push("*".to_string());
            out.push(&key, 0, format!("pub use {}::* = {kind} {source}{}", glob.module.join("::"), marks(None, glob.hidden)));
        }
    }
    Ok(out.finish())
}

/// Where a path leads.
enum Target {
    /// An item of this crate, by id.
    Local(String),
    /// An item of another crate: its kind and full path.
    External { kind: String, source: String },
}

/// How a path came to name its item.
#[derive(PartialEq, Clone, Copy)]
enum Origin {
    /// The item is declared there.
    Defined,
    /// A `pub use` of it by name.
    Use,
    /// A `pub use module::*`.
    Glob,
}

/// One path a user can name an item by.
struct Entry {
    path: Vec<String>,
    /// The module the path is in.
    parent: Vec<String>,
    target: Target,
    /// `#[doc(hidden)]`, on the item or on a module or re-export on the way.
    hidden: bool,
    origin: Origin,
}

/// A `pub use ...::*` in a module.
struct Glob {
    module: Vec<String>,
    target: Target,
    /// Where the source says the glob's target is, made absolute: for a
    /// private module, which has no public path.
    written: String,
    hidden: bool,
}

struct Walk<'a> {
    krate: &'a Value,
    entries: Vec<Entry>,
    globs: Vec<Glob>,
    /// The modules being walked, so that a module that re-exports its
    /// parent (`pub use crate::cg::*` inside `cg`) does not walk it forever.
    stack: Vec<String>,
}

impl Walk<'_> {
    /// Every path under the module `id`, named `path`.
    fn module(&mut self, id: &str, path: &[String], hidden: bool) {
        let index = &self.krate["index"];
        let items: Vec<String> = index[id]["inner"]["module"]["items"].as_array().into_iter().flatten().map(id_key).collect();
        // A name the module declares or re-exports by name hides the same
        // name from a glob.
        let named: HashSet<String> = items
            .iter()
            .filter_map(|i| {
                let item = &index[i];
                match item["inner"].get("use") {
                    Some(u) if u["is_glob"].as_bool() == Some(true) => None,
                    Some(u) => u["name"].as_str().map(str::to_string),
                    None => item["name"].as_str().map(str::to_string),
                }
            })
            .collect();
        for item_id in &items {
            self.item(item_id, path, hidden, Origin::Defined, &named);
        }
    }

    /// The paths that one of a module's items (a declaration or a `use`) adds.
    fn item(&mut self, id: &str, parent: &[String], hidden: bool, origin: Origin, named: &HashSet<String>) {
        let index = &self.krate["index"];
        let item = &index[id];
        if item.is_null() {
            return;
        }
        let Some(u) = item["inner"].get("use") else {
            if let Some(name) = item["name"].as_str() {
                if origin == Origin::Glob && named.contains(name) {
                    return;
                }
                self.target(parent, name, &item["id"], name, hidden, origin);
            }
            return;
        };
        if !is_public(item) {
            return;
        }
        let hidden = hidden || is_hidden(item);
        let target_id = id_key(&u["id"]);
        let target = &index[&target_id];
        let local = target.is_object() && target["crate_id"].as_u64() == Some(0);
        if u["is_glob"].as_bool() != Some(true) {
            let name = u["name"].as_str().unwrap_or("_");
            if origin == Origin::Glob && named.contains(name) {
                return;
            }
            let origin = if origin == Origin::Glob { Origin::Glob } else { Origin::Use };
            self.target(parent, name, &u["id"], u["source"].as_str().unwrap_or(name), hidden, origin);
            return;
        }
        let written = absolute(parent, u["source"].as_str().unwrap_or("_"));
        let glob_target = if local {
            Target::Local(target_id.clone())
        } else {
            Target::External { kind: self.external_kind(&u["id"]), source: self.source_path(&u["id"], &written) }
        };
        self.globs.push(Glob { module: parent.to_vec(), target: glob_target, written, hidden });
        if !local || self.stack.contains(&target_id) {
            return;
        }
        if let Some(module) = target["inner"].get("module") {
            self.stack.push(target_id.clone());
            for member in module["items"].as_array().into_iter().flatten() {
                self.item(&id_key(member), parent, hidden, Origin::Glob, named);
            }
            self.stack.pop();
        } else if let Some(e) = target["inner"].get("enum") {
            for variant in e["variants"].as_array().into_iter().flatten() {
                let name = index[&id_key(variant)]["name"].as_str().unwrap_or("_").to_string();
                if !named.contains(&name) {
                    self.target(parent, &name, variant, &name, hidden, Origin::Glob);
                }
            }
        }
    }

    /// A path `parent::name` to the item `id` (which the source wrote as
    /// `written`), and, for a module of this crate, every path under it.
    fn target(&mut self, parent: &[String], name: &str, id: &Value, written: &str, hidden: bool, origin: Origin) {
        let index = &self.krate["index"];
        let key = id_key(id);
        let item = &index[&key];
        let mut path = parent.to_vec();
        path.push(name.to_string());
        if !item.is_object() || item["crate_id"].as_u64() != Some(0) {
            let kind = self.external_kind(id);
            let source = self.source_path(id, written);
            self.entries.push(Entry { path, parent: parent.to_vec(), target: Target::External { kind, source }, hidden, origin });
            return;
        }
        if !is_public(item) || item["inner"].get("impl").is_some() {
            return;
        }
        let hidden = hidden || is_hidden(item);
        self.entries.push(Entry { path: path.clone(), parent: parent.to_vec(), target: Target::Local(key.clone()), hidden, origin });
        if item["inner"].get("module").is_some() && !self.stack.contains(&key) {
            self.stack.push(key.clone());
            self.module(&key, &path, hidden);
            self.stack.pop();
        }
    }

    /// rustdoc's full path for an item, else the path the source wrote.
    fn source_path(&self, id: &Value, written: &str) -> String {
        match self.krate["paths"][&id_key(id)]["path"].as_array() {
            Some(segments) => segments.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("::"),
            None => written.to_string(),
        }
    }

    /// The kind of another crate's item, from rustdoc's `paths`.
    fn external_kind(&self, id: &Value) -> String {
        let kind = self.krate["paths"][&id_key(id)]["kind"].as_str().unwrap_or("item");
        match kind {
            "function" => "fn",
            "module" => "mod",
            "type_alias" => "type",
            "constant" => "const",
            "proc_attribute" => "attribute_macro",
            "proc_derive" => "derive_macro",
            other => other,
        }
        .to_string()
    }
}

/// A `use` path made absolute from the module it is written in:
/// `crate::cg` in `k::a` is `k::cg`, `super::b` is `k::b`, `c` is `k::a::c`.
fn absolute(module: &[String], source: &str) -> String {
    let mut path = module.to_vec();
    for (k, segment) in source.split("::").enumerate() {
        match segment {
            "crate" if k == 0 => path.truncate(1),
            "self" => {}
            "super" => {
                path.pop();
            }
            other => path.push(other.to_string()),
        }
    }
    path.join("::")
}

/// The lines of a listing, each with the path it sorts by.
#[derive(Default)]
struct Lines(Vec<(Vec<String>, u8, String)>);

impl Lines {
    /// A line that sorts at `key`; `rank` orders the lines of one key (the
    /// item, then the traits it implements).
    fn push(&mut self, key: &[String], rank: u8, line: String) {
        self.0.push((key.to_vec(), rank, line));
    }

    fn finish(mut self) -> Vec<String> {
        self.0.sort();
        let mut seen = HashSet::new();
        self.0.into_iter().map(|(_, _, line)| line).filter(|line| seen.insert(line.clone())).collect()
    }
}

/// An item's lines, listed in full at `path`: the item, and its fields,
/// variants, methods, associated items and the traits it implements.
fn item_lines(names: &Names, index: &serde_json::Map<String, Value>, item: &Value, path: &[String], hidden: bool, out: &mut Lines) {
    let Some((kind, inner)) = item["inner"].as_object().and_then(|o| o.iter().next()) else {
        return;
    };
    let full = path.join("::");
    let marks = marks(Some(item), hidden);
    let generics = &inner["generics"];
    let params = names.params(generics);
    let where_clause = where_clause(&names.predicates(generics));
    let member = |name: &str| {
        let mut key = path.to_vec();
        key.push(name.to_string());
        key
    };
    match kind.as_str() {
        "module" => out.push(path, 0, format!("pub mod {full}{marks}")),
        "struct" | "union" => {
            out.push(path, 0, format!("pub {kind} {full}{params}{where_clause}{marks}"));
            let fields = match &inner["kind"] {
                Value::Object(k) if k.contains_key("plain") => k["plain"]["fields"].clone(),
                Value::Object(k) if k.contains_key("tuple") => k["tuple"].clone(),
                _ => inner["fields"].clone(),
            };
            for field in fields.as_array().into_iter().flatten().filter(|f| !f.is_null()) {
                let field = &index[&id_key(field)];
                if is_public(field) {
                    let name = field["name"].as_str().unwrap_or("_");
                    let ty = names.ty(&field["inner"]["struct_field"]);
                    out.push(&member(name), 0, format!("pub field {full}::{name}: {ty}{}", self::marks(Some(field), hidden)));
                }
            }
            impl_lines(names, index, inner, path, hidden, out);
        }
        "enum" => {
            out.push(path, 0, format!("pub enum {full}{params}{where_clause}{marks}"));
            for variant in inner["variants"].as_array().into_iter().flatten() {
                let variant = &index[&id_key(variant)];
                let name = variant["name"].as_str().unwrap_or("_");
                let shape = variant_shape(names, index, &variant["inner"]["variant"]);
                out.push(&member(name), 0, format!("pub variant {full}::{name}{shape}{}", self::marks(Some(variant), hidden)));
            }
            impl_lines(names, index, inner, path, hidden, out);
        }
        "function" => {
            let signature = names.inputs_and_output(&inner["sig"]);
            out.push(path, 0, format!("pub {}fn {full}{params}{signature}{where_clause}{marks}", header(&inner["header"])));
        }
        "trait" => {
            let unsafety = if inner["is_unsafe"].as_bool() == Some(true) { "unsafe " } else { "" };
            let auto = if inner["is_auto"].as_bool() == Some(true) { "auto " } else { "" };
            let supertraits = names.bounds(&inner["bounds"]);
            let supertraits = if supertraits.is_empty() { supertraits } else { format!(": {supertraits}") };
            out.push(path, 0, format!("pub {unsafety}{auto}trait {full}{params}{supertraits}{where_clause}{marks}"));
            for member_id in inner["items"].as_array().into_iter().flatten() {
                let m = &index[&id_key(member_id)];
                let name = m["name"].as_str().unwrap_or("_");
                let line = assoc_item(names, m, &format!("{full}::{name}"), &[], true);
                out.push(&member(name), 0, format!("{line}{}", self::marks(Some(m), hidden)));
            }
            // Implementations for types listed elsewhere are listed with the
            // type; these are the rest: for another crate's types, blanket ones.
            for impl_id in inner["implementations"].as_array().into_iter().flatten() {
                let imp = &index[&id_key(impl_id)];
                let for_local = names.has_public_path(&id_key(&imp["inner"]["impl"]["for"]["resolved_path"]["id"]));
                if !for_local && let Some(line) = trait_impl_line(names, imp) {
                    out.push(path, 1, line);
                }
            }
        }
        "constant" => out.push(path, 0, format!("pub const {full}: {}{marks}", names.ty(&inner["type"]))),
        "static" => {
            let m = if inner["is_mutable"].as_bool() == Some(true) { "mut " } else { "" };
            out.push(path, 0, format!("pub static {m}{full}: {}{marks}", names.ty(&inner["type"])));
        }
        "type_alias" => out.push(path, 0, format!("pub type {full}{params} = {}{where_clause}{marks}", names.ty(&inner["type"]))),
        "macro" => out.push(path, 0, format!("pub macro {full}!{marks}")),
        "proc_macro" => {
            let helpers: Vec<&str> = inner["helpers"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let helpers = if helpers.is_empty() { String::new() } else { format!(" (helpers: {})", helpers.join(", ")) };
            out.push(path, 0, format!("pub {} {full}{helpers}{marks}", kind_word(item)));
        }
        "extern_crate" => out.push(path, 0, format!("pub extern crate {full} = {}{marks}", inner["name"].as_str().unwrap_or("_"))),
        "variant" => {
            let shape = variant_shape(names, index, inner);
            out.push(path, 0, format!("pub variant {full}{shape}{marks}"));
        }
        other => out.push(path, 0, format!("pub {other} {full}{marks}")),
    }
}

/// The lines a type's impls add: for each inherent impl its public methods
/// and associated items, for each trait impl one `impl Trait for Type`, and
/// the auto traits `Send` and `Sync` where the type has them or lacks them
/// (marked `(auto)`). Blanket impls (`From<T> for T`) and the other auto
/// traits are left out: they change with other crates, not with this
/// crate's API.
fn impl_lines(names: &Names, index: &serde_json::Map<String, Value>, inner: &Value, path: &[String], hidden: bool, out: &mut Lines) {
    for impl_id in inner["impls"].as_array().into_iter().flatten() {
        let imp = &index[&id_key(impl_id)];
        let i = &imp["inner"]["impl"];
        if i["is_synthetic"].as_bool() == Some(true) {
            // Of the auto traits, `Send` and `Sync` are promises a user
            // builds on (a buffer moved to a thread, a device shared): a
            // type that lost one must show in review.
            let name = i["trait"]["path"].as_str().unwrap_or("");
            if matches!(name.rsplit("::").next(), Some("Send" | "Sync"))
                && let Some(line) = trait_impl_line(names, imp)
            {
                out.push(path, 1, format!("{line} (auto)"));
            }
            continue;
        }
        if !i["blanket_impl"].is_null() {
            continue;
        }
        if !i["trait"].is_null() {
            if derive_internal(imp) {
                continue;
            }
            if let Some(line) = trait_impl_line(names, imp) {
                out.push(path, 1, line);
            }
            continue;
        }
        // The type as the impl names it (`GridGroup<Cooperative>`), since a
        // method may be on some of its instances only, and the impl's bounds.
        let args = names.ty(&i["for"]);
        let args = args.find('<').map(|k| &args[k..]).unwrap_or("");
        let on = format!("{}{args}", path.join("::"));
        let impl_bounds = names.bounds_as_predicates(&i["generics"]);
        let impl_hidden = hidden || is_hidden(imp);
        for member_id in i["items"].as_array().into_iter().flatten() {
            let m = &index[&id_key(member_id)];
            if !is_public(m) {
                continue;
            }
            let name = m["name"].as_str().unwrap_or("_");
            let mut key = path.to_vec();
            key.push(name.to_string());
            let line = assoc_item(names, m, &format!("{on}::{name}"), &impl_bounds, false);
            out.push(&key, 0, format!("{line}{}", marks(Some(m), impl_hidden)));
        }
    }
}

/// Whether `imp` is an impl a derive adds of a trait internal to the
/// compiler (`StructuralPartialEq` with `PartialEq`, `TrivialClone` with
/// `Clone` and `Copy`): how this nightly's derives work, not the crate's API.
fn derive_internal(imp: &Value) -> bool {
    const INTERNAL: [&str; 3] = ["StructuralPartialEq", "StructuralEq", "TrivialClone"];
    let derived = imp["attrs"].as_array().into_iter().flatten().any(|a| attr_is(a, "automatically_derived"));
    let name = imp["inner"]["impl"]["trait"]["path"].as_str().unwrap_or("");
    derived && INTERNAL.contains(&name.rsplit("::").next().unwrap_or(""))
}

/// A method, associated constant or associated type, at `full`. In a trait
/// (`in_trait`) a provided method ends `{ ... }` and a default is ` = ...`.
fn assoc_item(names: &Names, m: &Value, full: &str, outer_bounds: &[String], in_trait: bool) -> String {
    let Some((kind, inner)) = m["inner"].as_object().and_then(|o| o.iter().next()) else {
        return format!("pub _ {full}");
    };
    match kind.as_str() {
        "function" => {
            let mut predicates = outer_bounds.to_vec();
            predicates.extend(names.predicates(&inner["generics"]));
            let provided = if in_trait && inner["has_body"].as_bool() == Some(true) { " { ... }" } else { "" };
            format!(
                "pub {}fn {full}{}{}{}{provided}",
                header(&inner["header"]),
                names.params(&inner["generics"]),
                names.inputs_and_output(&inner["sig"]),
                where_clause(&predicates)
            )
        }
        "assoc_const" => {
            let default = if in_trait && !inner["value"].is_null() { " = ..." } else { "" };
            format!("pub const {full}: {}{default}", names.ty(&inner["type"]))
        }
        "assoc_type" => {
            let bounds = names.bounds(&inner["bounds"]);
            let bounds = if bounds.is_empty() { bounds } else { format!(": {bounds}") };
            let ty = if inner["type"].is_null() { String::new() } else { format!(" = {}", names.ty(&inner["type"])) };
            format!("pub type {full}{}{bounds}{ty}{}", names.params(&inner["generics"]), where_clause(&names.predicates(&inner["generics"])))
        }
        other => format!("pub {other} {full}"),
    }
}

/// `impl<T: Pod> core::fmt::Debug for k::Buffer<T>`, for a trait impl that
/// is written in the source (not an auto trait's or a blanket impl's copy).
fn trait_impl_line(names: &Names, imp: &Value) -> Option<String> {
    let i = &imp["inner"]["impl"];
    if !i["blanket_impl"].is_null() || i["trait"].is_null() {
        return None;
    }
    let unsafety = if i["is_unsafe"].as_bool() == Some(true) { "unsafe " } else { "" };
    let negative = if i["is_negative"].as_bool() == Some(true) { "!" } else { "" };
    Some(format!(
        "{unsafety}impl{} {negative}{} for {}{}",
        names.params(&i["generics"]),
        names.path_with_args(&i["trait"]),
        names.ty(&i["for"]),
        where_clause(&names.predicates(&i["generics"]))
    ))
}

/// `(u32, &str)`, ` { code: i32 }`, or nothing, and ` = 3` for an explicit discriminant.
fn variant_shape(names: &Names, index: &serde_json::Map<String, Value>, variant: &Value) -> String {
    let field = |id: &Value| &index[&id_key(id)];
    let mut shape = match &variant["kind"] {
        Value::Object(k) if k.contains_key("tuple") => {
            let types: Vec<String> = k["tuple"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| if f.is_null() { "_".to_string() } else { names.ty(&field(f)["inner"]["struct_field"]) })
                .collect();
            format!("({})", types.join(", "))
        }
        Value::Object(k) if k.contains_key("struct") => {
            let fields: Vec<String> = k["struct"]["fields"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|f| format!("{}: {}", field(f)["name"].as_str().unwrap_or("_"), names.ty(&field(f)["inner"]["struct_field"])))
                .collect();
            format!(" {{ {} }}", fields.join(", "))
        }
        _ => String::new(),
    };
    if let Some(expr) = variant["discriminant"]["expr"].as_str() {
        shape += &format!(" = {expr}");
    }
    shape
}

/// ` where A, B`, or nothing.
fn where_clause(predicates: &[String]) -> String {
    if predicates.is_empty() { String::new() } else { format!(" where {}", predicates.join(", ")) }
}

/// The word a listing uses for an item's kind (`fn`, `struct`, `mod`, ...).
fn kind_word(item: &Value) -> &'static str {
    let Some(kind) = item["inner"].as_object().and_then(|o| o.keys().next()) else {
        return "item";
    };
    match kind.as_str() {
        "module" => "mod",
        "function" => "fn",
        "struct" => "struct",
        "union" => "union",
        "enum" => "enum",
        "variant" => "variant",
        "trait" => "trait",
        "trait_alias" => "trait_alias",
        "constant" => "const",
        "static" => "static",
        "type_alias" => "type",
        "macro" => "macro",
        "proc_macro" => match item["inner"]["proc_macro"]["kind"].as_str() {
            Some("attr") => "attribute_macro",
            Some("derive") => "derive_macro",
            _ => "macro",
        },
        "extern_crate" => "extern crate",
        "primitive" => "primitive",
        _ => "item",
    }
}

/// The attributes a line ends with: `#[non_exhaustive]`, `#[deprecated]`
/// and `#[doc(hidden)]` (on the item, or inherited from where it is).
fn marks(item: Option<&Value>, hidden: bool) -> String {
    let mut s = String::new();
    if let Some(item) = item {
        if item["attrs"].as_array().into_iter().flatten().any(|a| attr_is(a, "non_exhaustive")) {
            s += " #[non_exhaustive]";
        }
        if !item["deprecation"].is_null() {
            s += " #[deprecated]";
        }
    }
    if hidden || item.is_some_and(is_hidden) {
        s += " #[doc(hidden)]";
    }
    s
}

/// Whether `item` says `#[doc(hidden)]`.
fn is_hidden(item: &Value) -> bool {
    item["attrs"].as_array().into_iter().flatten().any(|a| attr_is(a, "doc(hidden)"))
}

/// Whether an attribute is `name`: rustdoc writes the ones it knows as a word
/// (`"non_exhaustive"`), the rest as source text (`{"other": "#[doc(hidden)]"}`).
fn attr_is(attr: &Value, name: &str) -> bool {
    let text = match attr {
        Value::String(s) => s.as_str(),
        Value::Object(o) => o.get("other").and_then(Value::as_str).unwrap_or(""),
        _ => "",
    };
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    text == name || text == format!("#[{name}]")
}

/// Public, or as public as what it belongs to (a variant, a trait's item).
fn is_public(item: &Value) -> bool {
    matches!(item["visibility"].as_str(), Some("public" | "default"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::unified;

    /// A hand-written crate `tiny`: a module, a re-export by name and by
    /// glob, a struct with a method and a hidden one, an enum, a trait, a
    /// hidden module, another crate's item re-exported, a macro, and a
    /// module that re-exports the crate root.
    fn tiny() -> Value {
        serde_json::from_str(include_str!("../fixture/tiny.json")).unwrap()
    }

    fn listed(krate: &Value) -> Vec<String> {
        listing(krate, &HashMap::new()).unwrap()
    }

    #[test]
    fn each_public_item_is_one_line_sorted_by_path() {
        let expected = [
            "pub mod tiny",
            "pub use tiny::* = mod tiny::inner",
            "pub use tiny::Arc = struct alloc::sync::Arc",
            "pub struct tiny::Square",
            "impl core::fmt::Debug for tiny::Square",
            "impl core::marker::Send for tiny::Square (auto)",
            "impl tiny::shapes::Shape for tiny::Square",
            "pub fn tiny::Square::area(&self) -> u32",
            "pub unsafe fn tiny::Square::internal() #[doc(hidden)]",
            "pub field tiny::Square::side: u32",
            "pub mod tiny::again",
            "pub use tiny::again::* = mod tiny",
            "pub fn tiny::deep()",
            "pub mod tiny::hidden #[doc(hidden)]",
            "pub const tiny::hidden::LIMIT: usize #[doc(hidden)]",
            "pub mod tiny::shapes",
            "pub enum tiny::shapes::Color #[non_exhaustive]",
            "pub variant tiny::shapes::Color::Red",
            "pub variant tiny::shapes::Color::Rgb(u8, u8, u8)",
            "pub trait tiny::shapes::Shape",
            "pub fn tiny::shapes::Shape::name(&self) -> &str { ... }",
            "pub fn tiny::shapes::Shape::sides(&self) -> u32",
            "pub use tiny::shapes::Square = struct tiny::Square",
            "pub macro tiny::tiny!",
        ];
        assert_eq!(listed(&tiny()), expected);
    }

    #[test]
    fn a_hidden_item_is_listed_and_marked_hidden() {
        let lines = listed(&tiny());
        assert!(lines.contains(&"pub unsafe fn tiny::Square::internal() #[doc(hidden)]".to_string()));
        assert!(lines.contains(&"pub const tiny::hidden::LIMIT: usize #[doc(hidden)]".to_string()));
    }

    #[test]
    fn send_is_listed_as_auto_and_blanket_impls_are_left_out() {
        let lines = listed(&tiny());
        assert!(lines.contains(&"impl core::marker::Send for tiny::Square (auto)".to_string()), "{lines:#?}");
        assert!(!lines.iter().any(|l| l.contains("From")), "{lines:#?}");
    }

    /// A type that loses `Send` (a raw pointer added to it, say) changes a
    /// line: rustdoc then writes a negative impl.
    #[test]
    fn a_type_that_loses_send_is_a_changed_line() {
        let mut krate = tiny();
        let index = krate["index"].as_object_mut().unwrap();
        let send = index
            .iter()
            .find(|(_, v)| v["inner"]["impl"]["is_synthetic"].as_bool() == Some(true) && v["inner"]["impl"]["trait"]["path"].as_str() == Some("Send"))
            .map(|(k, _)| k.clone())
            .expect("the fixture's Square has a synthetic Send impl");
        index.get_mut(&send).unwrap()["inner"]["impl"]["is_negative"] = true.into();
        let lines = listed(&krate);
        assert!(lines.contains(&"impl !core::marker::Send for tiny::Square (auto)".to_string()), "{lines:#?}");
    }

    #[test]
    fn an_added_public_function_is_an_added_line_in_the_diff() {
        let before = listed(&tiny());
        let mut krate = tiny();
        let mut added = krate["index"]["23"].clone();
        added["id"] = 60.into();
        added["name"] = "added".into();
        krate["index"]["60"] = added;
        krate["index"]["1"]["inner"]["module"]["items"].as_array_mut().unwrap().push(60.into());
        let after = listed(&krate);
        let before: Vec<&str> = before.iter().map(String::as_str).collect();
        let after: Vec<&str> = after.iter().map(String::as_str).collect();
        let diff = unified(&before, &after, 0);
        assert_eq!(diff, ["@@ -23,0 +24,1 @@", "+pub fn tiny::shapes::added()"]);
    }

    #[test]
    fn another_crates_item_is_named_by_its_public_path_there() {
        let public = public_paths(&tiny()).unwrap();
        assert_eq!(public["tiny::shapes::Square"], "tiny::Square");
    }

    #[test]
    fn a_use_path_is_made_absolute_from_its_module() {
        let module = ["k".to_string(), "a".to_string()];
        assert_eq!(absolute(&module, "crate::cg"), "k::cg");
        assert_eq!(absolute(&module, "super::b"), "k::b");
        assert_eq!(absolute(&module, "c"), "k::a::c");
    }
}
