//! `#[kernel]`: declares a GPU kernel once and derives everything else from
//! that one declaration (the attribute rust-cuda's `cuda_std` spells the same way).
//!
//! ```ignore
//! #[kernel(cooperative, shared_memory = one_f32_per_tile)]
//! pub unsafe fn reduce_cooperative_grid<const TILE: u32 = 32>(input: In<f32>, partials: Out<f32>, out: Out<f32>, n: usize) { ... }
//! ```
//!
//! emits
//! - in the PTX build, `#[unsafe(no_mangle)] pub unsafe extern "gpu-kernel" fn reduce_cooperative_grid(...)`,
//!   the body instantiated with the default tile (one `.entry` in the PTX);
//! - on the host, `pub unsafe fn reduce_cooperative_grid(...)`, the same body, which the emulator runs;
//! - on the host, `pub const REDUCE_COOPERATIVE_GRID: KernelDef<(In<f32>, Out<f32>, Out<f32>, usize), GridSync>`,
//!   whose PTX name is the function's own name, whose launch contract is `GridSync` exactly when the
//!   attribute says `cooperative`, and whose dynamic shared memory is `shared_memory(threads, TILE)`.
//!   For the emulator it can also instantiate the body with any other tile (`with_tile`).
//!
//! Options: `cooperative` (the kernel calls `grid.sync()`: only a cooperative launch may run it),
//! `cluster` (the kernel calls `this_cluster()`: only a cluster launch may run it, and its GPU entry
//! is built only when the target is sm_90 or newer; its contract is `Cluster<...>`),
//! `shared_memory = f` (bytes of dynamic shared memory per block: `fn(threads_per_block: u32) -> u32`,
//! or for a kernel with a `<const TILE: u32 = N>` parameter `fn(threads_per_block: u32, tile: u32) -> u32`), `overread = f` (`const fn(threads_per_block: u32)
//! -> usize`, elements the kernel may read past its input, for a kernel that shows the bounds bug),
//! `emulator` (no GPU entry: a mistake kept for the emulator to name, which the PTX need not carry;
//! a GPU refuses to load it by name), `launch_bounds(max_threads, min_blocks)` (C++'s
//! `__launch_bounds__`: every entry of the kernel gets `.maxntid max_threads` and `.minnctapersm
//! min_blocks`, so ptxas keeps its registers low enough for `min_blocks` blocks of `max_threads` per
//! SM; the host refuses a larger block by name. Rust has no attribute for these directives: the
//! macro leaves a `__launch_bounds__<name>` global in the PTX, which `cg-builder` turns into them),
//! `crate = path` or `crate = "path"` (the path every emitted item names cg-kernel by, `::cg_kernel`
//! unless given: for a crate that depends on it under another name or re-exports it; `path::cg::this_grid()`
//! is then one of the spellings the body's rewrite recognizes), `def = NAME` (the definition's name,
//! `NAME` for `name` unless given: for a macro that stamps kernels whose names it is handed, and
//! must name their definitions itself).
//!
//! A kernel takes at most 16 parameters (`cg_kernel::kernels::MAX_PARAMS`, the tuples the host's
//! definitions and argument lists are built for): a 17th is a compile error at it.
//!
//! In the body of a `cooperative` kernel, `this_grid()` (and `cg::this_grid()`) is the grid that
//! can `sync()`, `GridGroup<Cooperative>`; everywhere else it is `GridGroup<Ordinary>`, which has no
//! `sync()`: a kernel that calls `grid.sync()` without `cooperative` is a compile error at that call,
//! naming `#[kernel(cooperative)]` (`cg_kernel::cg::GridGroup` says how).

#![deny(missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::{Delimiter, TokenStream as Tokens, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::Parse;
use syn::spanned::Spanned;
use syn::{Error, Expr, FnArg, GenericParam, ItemFn, Pat, Path, Result, ReturnType, Safety, Type};

/// The tile sizes `tiled_partition` accepts, each of which `with_tile` can instantiate.
const TILES: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// The most parameters a kernel may take: the tuples cg-kernel implements
/// `Params` for (the definition's type) and cg-launcher `Args` (what a
/// launch passes), and `cg_kernel::kernels::MAX_PARAMS`.
const MAX_PARAMS: usize = 16;

#[derive(Default)]
struct Options {
    cooperative: bool,
    emulator: bool,
    cluster: bool,
    shared_memory: Option<Path>,
    overread: Option<Path>,
    /// `launch_bounds(max_threads, min_blocks)`, min_blocks 0 if not given.
    launch_bounds: Option<(u32, u32)>,
    /// `crate = path`: where cg-kernel is, `::cg_kernel` if not given.
    krate: Option<Path>,
    /// `def = NAME`: the definition's name, the function's in capitals if not given.
    def: Option<syn::Ident>,
}

impl Options {
    /// The path every emitted item of cg-kernel is named by.
    fn krate(&self) -> Tokens {
        match &self.krate {
            Some(path) => quote!(#path),
            None => quote!(::cg_kernel),
        }
    }
}

fn parse_options(attr: Tokens) -> Result<Options> {
    let mut o = Options::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("cooperative") {
            o.cooperative = true;
        } else if meta.path.is_ident("emulator") {
            o.emulator = true;
        } else if meta.path.is_ident("cluster") {
            o.cluster = true;
        } else if meta.path.is_ident("shared_memory") {
            o.shared_memory = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("overread") {
            o.overread = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("crate") {
            // `crate = path`, or serde's `crate = "path"`.
            let value = meta.value()?;
            o.krate =
                Some(if value.peek(syn::LitStr) { value.parse::<syn::LitStr>()?.parse_with(Path::parse_mod_style)? } else { Path::parse_mod_style(value)? });
        } else if meta.path.is_ident("def") {
            o.def = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("launch_bounds") {
            let content;
            syn::parenthesized!(content in meta.input);
            let numbers = content.parse_terminated(syn::LitInt::parse, syn::Token![,])?;
            let bounds = numbers.iter().map(syn::LitInt::base10_parse::<u32>).collect::<Result<Vec<u32>>>()?;
            o.launch_bounds = match bounds[..] {
                [max] | [max, 0] if max > 0 => Some((max, 0)),
                [max, min] if max > 0 => Some((max, min)),
                _ => return Err(meta.error("expected `launch_bounds(max_threads)` or `launch_bounds(max_threads, min_blocks)`, max_threads above 0")),
            };
        } else {
            return Err(
                meta.error(
                    "expected `cooperative`, `cluster`, `emulator`, `shared_memory = f`, `overread = f`, `launch_bounds(max_threads, min_blocks)`, `crate = path` or `def = NAME`",
                )
            );
        }
        Ok(())
    });
    syn::parse::Parser::parse2(parser, attr)?;
    Ok(o)
}

/// The kernel's `<const TILE: u32 = N>` parameter, if it has one.
struct Tile {
    ident: syn::Ident,
    default: Expr,
}

fn tile_param(f: &ItemFn) -> Result<Option<Tile>> {
    let params: Vec<&GenericParam> = f.sig.generics.params.iter().collect();
    match params.as_slice() {
        [] => Ok(None),
        [GenericParam::Const(c)] => {
            let Some((_, default)) = &c.default else {
                return Err(Error::new(c.span(), "give the tile size a default, as in `<const TILE: u32 = 32>`: the GPU entry is built with it"));
            };
            Ok(Some(Tile { ident: c.ident.clone(), default: default.clone() }))
        }
        _ => Err(Error::new(f.sig.generics.span(), "a kernel takes at most one generic parameter, `<const TILE: u32 = N>`")),
    }
}

/// `TWO_WORDS` from `two_words`.
fn screaming(name: &str) -> String {
    name.to_uppercase()
}

/// Whether `tokens` (at any depth) hold `name` as a bare name and as
/// `cg::name`.
fn names(tokens: Tokens, name: &str) -> (bool, bool) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let (mut bare, mut in_cg) = (false, false);
    for (k, t) in tokens.iter().enumerate() {
        match t {
            TokenTree::Ident(i) if i == name => {
                let before = |back: usize| k.checked_sub(back).map(|b| &tokens[b]);
                let after_colons = matches!(before(1), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                let after_cg = after_colons && matches!(before(3), Some(TokenTree::Ident(c)) if c == "cg");
                let path_start = !after_cg || !matches!(before(4), Some(TokenTree::Punct(p)) if p.as_char() == ':');
                bare |= !after_colons;
                in_cg |= after_cg && path_start;
            }
            TokenTree::Group(g) => {
                let (b, c) = names(g.stream(), name);
                bare |= b;
                in_cg |= c;
            }
            _ => {}
        }
    }
    (bare, in_cg)
}

/// The path written before a name, as segments (`cg_kernel::cg::` gives `gpu`,
/// `cg`), and how many tokens it takes, a leading `::` included.
fn path_before(out: &[TokenTree]) -> (Vec<String>, usize) {
    let is_colon = |t: &TokenTree| matches!(t, TokenTree::Punct(p) if p.as_char() == ':');
    let (mut segments, mut taken) = (Vec::new(), 0);
    while let [.., a, b] = &out[..out.len() - taken] {
        if !(is_colon(a) && is_colon(b)) {
            break;
        }
        taken += 2;
        match out[..out.len() - taken].last() {
            Some(TokenTree::Ident(seg)) => {
                segments.insert(0, seg.to_string());
                taken += 1;
            }
            _ => break,
        }
    }
    (segments, taken)
}

/// The paths by which this project's `this_grid` and `this_cluster` are
/// called: bare, `cg::`, and `cg::` under the crates that export it: `gpu`,
/// `cg_kernel`, `crate`, and the path `crate = path` names (`krate`, as
/// segments).
fn ours(segments: &[String], krate: &[String]) -> bool {
    match segments {
        [] => true,
        [cg] => cg == "cg",
        [before @ .., cg] if cg == "cg" && before == krate => true,
        [krate, cg] => cg == "cg" && ["gpu", "cg_kernel", "crate"].contains(&krate.as_str()),
        _ => false,
    }
}

/// The segments of `path`, without a leading `::`.
fn segments(path: &Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// `tokens` with every call of `name` with no arguments by one of this
/// project's spellings (`this_grid()`, `cg::this_grid()`, `cg_kernel::cg::this_grid()`,
/// `::cg_kernel::cg::this_grid()`, `renamed::cg::this_grid()` for `crate = renamed`)
/// replaced by `call`, spanned where the call was. A method `x.name()`, a
/// definition `fn name()` and a function of that name elsewhere
/// (`my::this_grid()`) are left alone.
fn rewrite_calls(tokens: Tokens, name: &str, call: &Tokens, krate: &[String]) -> Tokens {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out: Vec<TokenTree> = Vec::new();
    let mut k = 0;
    while k < tokens.len() {
        match &tokens[k] {
            TokenTree::Ident(i) if i == name => {
                let empty_call = matches!(tokens.get(k + 1), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis && g.stream().is_empty());
                let method_or_fn =
                    matches!(out.last(), Some(TokenTree::Punct(p)) if p.as_char() == '.') || matches!(out.last(), Some(TokenTree::Ident(f)) if f == "fn");
                let (segments, taken) = path_before(&out);
                if !empty_call || method_or_fn || !ours(&segments, krate) {
                    out.push(tokens[k].clone());
                    k += 1;
                    continue;
                }
                out.truncate(out.len() - taken);
                let span = i.span();
                out.extend(call.clone().into_iter().map(|mut t| {
                    t.set_span(span);
                    t
                }));
                k += 2;
            }
            TokenTree::Group(g) => {
                let mut inner = proc_macro2::Group::new(g.delimiter(), rewrite_calls(g.stream(), name, call, krate));
                inner.set_span(g.span());
                out.push(TokenTree::Group(inner));
                k += 1;
            }
            t => {
                out.push(t.clone());
                k += 1;
            }
        }
    }
    out.into_iter().collect()
}

/// A `fn` item declared inside the kernel's body (at any depth) whose body
/// names `name`: the kernel's own grid or cluster is not in scope there (the
/// watched entry's grid comes from the entry's hidden parameter), so such a
/// helper is named here rather than left to a later error that points at
/// the attribute.
fn nested_fn_naming(tokens: Tokens, name: &str) -> Option<proc_macro2::Span> {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (k, t) in tokens.iter().enumerate() {
        match t {
            TokenTree::Ident(f) if f == "fn" && matches!(tokens.get(k + 1), Some(TokenTree::Ident(_))) => {
                let body = tokens[k + 1..].iter().find_map(|t| match t {
                    TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => Some(g.stream()),
                    _ => None,
                });
                if let Some(body) = body {
                    let (bare, in_cg) = names(body, name);
                    if bare || in_cg {
                        return Some(tokens[k + 1].span());
                    }
                }
            }
            TokenTree::Group(g) => {
                if let Some(span) = nested_fn_naming(g.stream(), name) {
                    return Some(span);
                }
            }
            _ => {}
        }
    }
    None
}

/// The hidden last parameter of a cooperative kernel's watched entry: this
/// launch's barrier memory (`cg_kernel::cg::barrier::watched`, ABI in `docs/abi.md`).
fn barrier_param() -> syn::Ident {
    syn::Ident::new("__cg_grid_barrier", proc_macro2::Span::mixed_site())
}

/// The body of a `#[kernel(cooperative)]` or `#[kernel(cluster)]` kernel:
/// `this_grid` / `this_cluster` and `cg::...` there are the grid that may
/// `sync()` (`cg_kernel::cg::cooperative_kernel`) and the cluster that may be used
/// (`cg_kernel::cg::cluster_kernel`). Beside it, uses of the module's own names,
/// which the body's shadow, so that the module's imports stay used (and a
/// missing one is still an error).
///
/// With `watched`, the body of a cooperative kernel's watched entry: its
/// `this_grid()` is the one whose `sync()` is the watched barrier
/// (`cg_kernel::cg::barrier::watched`), which the host launches above
/// `WATCHED_ABOVE_BLOCKS` blocks.
fn declared_body(f: &ItemFn, o: &Options, watched: bool) -> (Tokens, Tokens) {
    let stmts = &f.block.stmts;
    let krate = o.krate();
    let spelled = o.krate.as_ref().map(segments).unwrap_or_default();
    let (scope, swapped): (Tokens, &[(&str, Tokens)]) = match (o.cooperative, o.cluster) {
        (true, false) if watched => (quote!(cooperative_kernel::watched::{cg, this_grid}), &[]),
        (true, false) => (quote!(cooperative_kernel::{cg, this_grid}), &[("this_grid", quote!(GridGroup<#krate::cg::Ordinary>))]),
        (false, true) => (quote!(cluster_kernel::{cg, this_cluster}), &[("this_cluster", quote!(ClusterGroup<#krate::cg::Unclustered>))]),
        _ if watched => (quote!(cooperative_cluster_kernel::watched::{cg, this_cluster, this_grid}), &[]),
        _ => (
            quote!(cooperative_cluster_kernel::{cg, this_cluster, this_grid}),
            &[("this_grid", quote!(GridGroup<#krate::cg::Ordinary>)), ("this_cluster", quote!(ClusterGroup<#krate::cg::Unclustered>))],
        ),
    };
    // Every call of `this_grid()` / `this_cluster()`, by any path, is the
    // declared one: the `use` above covers the bare and `cg::` spellings and
    // any use that is not a call; the rewrite covers a full path too.
    let mut stmts = quote!(#( #stmts )*);
    // The constructors are `unsafe` (their contract: called where this macro
    // calls them); the block is allowed to be unneeded, for a call the
    // kernel's author already wrote inside `unsafe { }`.
    let declared = |call: Tokens| quote!({ #[allow(unused_unsafe)] let declared = unsafe { #call }; declared });
    if o.cooperative {
        let barrier = barrier_param();
        let grid =
            if watched { quote!(#krate::cg::cooperative_kernel::watched::this_grid(#barrier)) } else { quote!(#krate::cg::cooperative_kernel::this_grid()) };
        stmts = rewrite_calls(stmts, "this_grid", &declared(grid), &spelled);
    }
    if o.cluster {
        stmts = rewrite_calls(stmts, "this_cluster", &declared(quote!(#krate::cg::cluster_kernel::this_cluster())), &spelled);
    }
    let body = quote_spanned! {f.block.brace_token.span.join()=> {
        #[allow(unused_imports)]
        use #krate::cg::#scope;
        #stmts
    }};
    let block = quote::ToTokens::to_token_stream(&f.block);
    let mut uses = Tokens::new();
    for (name, ty) in swapped {
        let (bare, in_cg) = names(block.clone(), name);
        let ident = format_ident!("{}", name);
        let plain = quote!(fn() -> #krate::cg::#ty);
        if bare {
            uses.extend(quote! { const _: #plain = #ident; });
        }
        if in_cg {
            uses.extend(quote! { const _: #plain = cg::#ident; });
        }
    }
    (body, uses)
}

/// `tokens` with each bare `shared_array!(T, N)` replaced by
/// `array(k, T, N, shared_array)` for the k-th, and the `(T, N)` of each in order.
fn rewrite_shared_arrays(
    tokens: Tokens,
    found: &mut Vec<(Tokens, Tokens)>,
    array: &dyn Fn(usize, &Tokens, &Tokens, &proc_macro2::Ident) -> Tokens,
) -> Result<Tokens> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Tokens::new();
    let mut i = 0;
    while i < trees.len() {
        let call = match (&trees[i], trees.get(i + 1), trees.get(i + 2)) {
            (TokenTree::Ident(id), Some(TokenTree::Punct(bang)), Some(TokenTree::Group(args)))
                if id == "shared_array"
                    && bang.as_char() == '!'
                    && !matches!(i.checked_sub(1).map(|j| &trees[j]), Some(TokenTree::Punct(p)) if p.as_char() == ':') =>
            {
                Some((id, args))
            }
            _ => None,
        };
        if let Some((macro_name, args)) = call {
            let parts: Vec<TokenTree> = args.stream().into_iter().collect();
            let comma = parts.iter().position(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == ','));
            let Some(comma) = comma.filter(|&c| c > 0 && c + 1 < parts.len()) else {
                return Err(Error::new(args.span(), "write `shared_array!(T, N)`: the element type, then the number of elements"));
            };
            let ty: Tokens = parts[..comma].iter().cloned().collect();
            let len: Tokens = parts[comma + 1..].iter().cloned().collect();
            out.extend(array(found.len(), &ty, &len, macro_name));
            found.push((ty, len));
            i += 3;
            continue;
        }
        match &trees[i] {
            TokenTree::Group(g) => {
                let inner = rewrite_shared_arrays(g.stream(), found, array)?;
                let mut group = proc_macro2::Group::new(g.delimiter(), inner);
                group.set_span(g.span());
                out.extend([TokenTree::Group(group)]);
            }
            t => out.extend([t.clone()]),
        }
        i += 1;
    }
    Ok(out)
}

fn expand(mut options: Options, mut f: ItemFn) -> Result<Tokens> {
    let statics = static_arrays(&mut options, &mut f)?;
    let mut out = expand_kernel(&options, f)?;
    out.extend(statics);
    Ok(out)
}

/// The kernel's `shared_array!`s: each call of `f`'s body replaced by its
/// array, and `options.shared_memory` by a function that adds their bytes
/// after the dynamic part; returns the items that size them (none where
/// the body has no call).
fn static_arrays(options: &mut Options, f: &mut ItemFn) -> Result<Tokens> {
    let krate = options.krate();
    let name = f.sig.ident.clone();
    // Named after the kernel as written (`format_ident!` drops a raw
    // identifier's `r#`), not upper-cased: `foo` and `Foo` are two kernels.
    let layout = format_ident!("__cg_shared_arrays_{}", name);
    let dynamic_part = match &options.shared_memory {
        Some(p) => quote!(#p),
        None => quote!(#krate::mem::no_dynamic_shared),
    };
    let sizes = format_ident!("__cg_shared_array_sizes_{}", name);
    let sized = format_ident!("__cg_shared_bytes_{}", name);
    // The call stays a call of the macro the kernel's author imported
    // (so that the import is used), at its internal arm, which names
    // the `unsafe` constructor; the block that makes it is this one.
    // The array's bytes and alignment as the body sees its type and
    // length are checked, at compile time, against those the definition
    // counted outside the body (a name the body shadows would differ);
    // its start is the kernel's whole shared memory less the arrays',
    // from the function the definition sizes it by.
    let array = |k: usize, ty: &Tokens, len: &Tokens, macro_name: &proc_macro2::Ident| {
        quote! {
            {
                // Array lengths, which the type check evaluates (a
                // `const` assert would wait for code generation): a
                // mismatch is "expected an array with a size of ...".
                let _counted_outside_the_body: [(); #sizes[#k].0] = [(); ::core::mem::size_of::<#ty>() * (#len)];
                let _aligned_outside_the_body: [(); #sizes[#k].1] = [(); ::core::mem::align_of::<#ty>()];
                #[allow(unused_unsafe)]
                // SAFETY: the kernel's shared memory is its dynamic part, then
                // these arrays at these offsets (its definition asks for both:
                // `#[kernel]` counted them, with this type and length, checked
                // above); each call is one array.
                let array = unsafe {
                    #macro_name!(@static #ty, (#sized(#krate::cg::this_thread_block().num_threads()) as usize).saturating_sub(#layout.1) + #layout.0[#k], #len)
                };
                array
            }
        }
    };
    let mut found = Vec::new();
    let block = rewrite_shared_arrays(quote::ToTokens::to_token_stream(&f.block), &mut found, &array)?;
    if found.is_empty() {
        return Ok(Tokens::new());
    }
    if tile_param(f)?.is_some() {
        return Err(Error::new(
            f.sig.generics.span(),
            "`shared_array!` is not yet supported in a kernel with a `<const TILE: u32>` parameter: size its shared memory with `shared_memory = f` and `dynamic_shared()`",
        ));
    }
    *f.block = syn::parse2(block)?;
    let count = found.len();
    let items = found.iter().map(|(ty, len)| quote! { (::core::mem::size_of::<#ty>() * (#len), ::core::mem::align_of::<#ty>()) });
    let total = quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        const #sizes: [(usize, usize); #count] = [ #( #items ),* ];
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        const #layout: ([usize; #count], usize) = #krate::mem::static_arrays_layout(#sizes);
        /// The kernel's shared memory: its dynamic part, then its
        /// `shared_array!`s (`u32::MAX` where that does not fit in a
        /// `u32`, which no launch accepts).
        #[doc(hidden)]
        #[allow(non_snake_case)]
        fn #sized(threads_per_block: u32) -> u32 {
            u32::try_from(#krate::mem::static_arrays_start(#dynamic_part(threads_per_block)).saturating_add(#layout.1)).unwrap_or(u32::MAX)
        }
    };
    options.shared_memory = Some(syn::parse_quote!(#sized));
    Ok(total)
}

fn expand_kernel(options: &Options, f: ItemFn) -> Result<Tokens> {
    if !matches!(f.sig.safety, Safety::Unsafe(_)) {
        return Err(Error::new(f.sig.fn_token.span(), "a kernel is an `unsafe fn`: its caller promises what its parameters hold"));
    }
    if !matches!(f.sig.output, ReturnType::Default) {
        return Err(Error::new(f.sig.output.span(), "a kernel returns nothing; it writes its results through `Out` parameters"));
    }
    let tile = tile_param(&f)?;
    let block_tokens = quote::ToTokens::to_token_stream(&f.block);
    for (declared, name, group) in [(options.cooperative, "this_grid", "GridGroup"), (options.cluster, "this_cluster", "ClusterGroup")] {
        if let Some(span) = declared.then(|| nested_fn_naming(block_tokens.clone(), name)).flatten() {
            return Err(Error::new(
                span,
                format!(
                    "a `fn` declared inside a kernel cannot call `{name}()`: the kernel's {} exists only in the kernel's own body; declare the helper outside the kernel and pass it `&{group}`",
                    if name == "this_grid" { "grid" } else { "cluster" }
                ),
            ));
        }
    }

    let krate = options.krate();
    let name = &f.sig.ident;
    // The entry's name: a raw identifier's without its `r#` (`r#loop` is
    // the symbol `loop`).
    let name_str = name.unraw().to_string();
    let def = options.def.clone().unwrap_or_else(|| format_ident!("{}", screaming(&name_str)));
    let body_fn = format_ident!("__{}_body", name);
    let vis = &f.vis;
    let (body, outer_uses) =
        if options.cooperative || options.cluster { declared_body(&f, options, false) } else { (quote::ToTokens::to_token_stream(&f.block), quote! {}) };
    let watched_body = options.cooperative.then(|| declared_body(&f, options, true).0);
    let (docs, other_attrs): (Vec<_>, Vec<_>) = f.attrs.iter().partition(|a| a.path().is_ident("doc"));

    if let Some(extra) = f.sig.inputs.iter().nth(MAX_PARAMS) {
        return Err(Error::new(
            extra.span(),
            format!(
                "a kernel takes at most {MAX_PARAMS} parameters here: the host's definitions (cg-kernel's `Params`) and argument lists (cg-launcher's `Args`) are built for up to {MAX_PARAMS}, fewer than CUDA allows; pack buffers of one type into one and read each at its offset, or pass the numbers in one `In<u32>` or `In<u64>` buffer"
            ),
        ));
    }
    let mut idents = Vec::new();
    let mut types: Vec<&Type> = Vec::new();
    for arg in &f.sig.inputs {
        let FnArg::Typed(pt) = arg else {
            return Err(Error::new(arg.span(), "a kernel has no `self`"));
        };
        let Pat::Ident(pi) = &*pt.pat else {
            return Err(Error::new(pt.pat.span(), "name each kernel parameter with a plain identifier"));
        };
        idents.push(pi.ident.clone());
        types.push(&pt.ty);
    }
    let names: Vec<String> = idents.iter().map(|i| i.unraw().to_string()).collect();
    // The parameter types as the tuple the definition is generic over, in
    // the parentheses of the kernel's own parameter list: a type that cannot
    // be a parameter (`flag: bool`) is then an error at that list, not at
    // the attribute.
    let param_tuple = {
        let mut tuple = Tokens::new();
        f.sig.paren_token.surround(&mut tuple, |inner| quote::ToTokens::to_tokens(&quote! { #( #types, )* }, inner));
        tuple
    };
    let params = quote! { #( #idents: #types, )* };
    let contract = if options.cooperative { quote!(#krate::kernels::GridSync) } else { quote!(#krate::kernels::NoGridSync) };
    let contract = if options.cluster { quote!(#krate::kernels::Cluster<#contract>) } else { contract };
    let list_span = f.sig.paren_token.span.join();
    let def_type = respan(quote!(#krate::kernels::KernelDef<#param_tuple, #contract>), list_span);
    let register = respan(quote!(#krate::kernels::Registered::new), list_span);
    let def_ref = respan(quote!(&#def), list_span);
    let register = quote_spanned!(list_span=> #register(#def_ref));
    // A cluster kernel's entry is only in the sm_90 module: its instructions need sm_90.
    // An `emulator` kernel has no GPU entry at all.
    let gpu_cfg = if options.emulator {
        quote!(#[cfg(any())])
    } else if options.cluster {
        quote!(#[cfg(all(target_arch = "nvptx64", target_feature = "sm_90"))])
    } else {
        quote!(#[cfg(target_arch = "nvptx64")])
    };
    let emulator_only = if options.emulator { quote!(.emulator_only()) } else { quote!() };
    // The crate this kernel is compiled in, whose PTX module holds it.
    let emulator_only = quote!(#emulator_only.in_crate(::core::env!("CARGO_CRATE_NAME")));
    // A kernel without a tile sizes its shared memory from the block alone.
    let block_shared = match (&options.shared_memory, tile.is_none()) {
        (Some(f), true) => quote!(.with_shared_memory(#f)),
        _ => quote!(),
    };
    let (bounds_def, bounds_global) = match options.launch_bounds {
        Some((max, min)) => {
            let global = format_ident!("__launch_bounds__{}", name);
            (
                quote!(.with_launch_bounds(#max, #min)),
                quote! {
                    // Read and removed by cg-builder, which writes `.maxntid` and
                    // `.minnctapersm` into this kernel's entries.
                    #gpu_cfg
                    #[unsafe(no_mangle)]
                    #[used]
                    #[doc(hidden)]
                    #[allow(non_upper_case_globals)]
                    pub static #global: [u32; 2] = [#max, #min];
                },
            )
        }
        None => (quote!(), quote!()),
    };
    let overread = match &options.overread {
        Some(p) => quote!(#p),
        None => quote!(#krate::kernels::no_overread),
    };

    let watched_fn = format_ident!("__{}_body_watched", name);
    let barrier = barrier_param();
    let (gpu_call, host_body, generic_body, tile_info) = match &tile {
        Some(Tile { ident, default }) => {
            let call = quote! { #body_fn::<{ #default }>( #( #idents ),* ) };
            // The tile size checked where the learner wrote it: an error at
            // `const TILE: u32 = 24`, not inside tiled_partition.
            let tile_check = quote_spanned! {default.span()=> const _: () = #krate::cg::assert_tile_size::<{ #default }>(); };
            let watched_generic = watched_body.as_ref().map(|b| {
                quote! {
                    #[doc(hidden)]
                    #gpu_cfg
                    #[inline(always)]
                    #[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
                    #( #other_attrs )*
                    #vis unsafe fn #watched_fn<const #ident: u32>( #params #barrier: *mut u32 ) #b
                }
            });
            let generic = quote! {
                #[doc(hidden)]
                #[inline(always)]
                #[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
                #( #other_attrs )*
                #vis unsafe fn #body_fn<const #ident: u32>( #params ) #body
                #watched_generic
                #tile_check
            };
            let shared = match &options.shared_memory {
                Some(p) => quote! { Some(#p) },
                None => quote! { None },
            };
            let arms = TILES.iter().map(|t| quote! { #t => Some(#body_fn::<#t> as _), });
            let info = quote! {
                Some(#krate::kernels::TileInfo {
                    tile: #default,
                    default_tile: #default,
                    shared_memory: #shared,
                    instantiate: {
                        #[allow(clippy::type_complexity)]
                        fn instantiate(tile: u32) -> Option<<#param_tuple as #krate::kernels::Params>::Entry> {
                            match tile { #( #arms )* _ => None }
                        }
                        instantiate
                    },
                })
            };
            (quote! { unsafe { #call } }, quote! { unsafe { #call } }, generic, info)
        }
        None => (quote! { #body }, quote! { #body }, quote! {}, quote! { None }),
    };
    // The GPU entry tells `cg_kernel::trace` when the block starts and ends (which
    // records nothing unless the traced build is asked for). A body that
    // returns early runs in a closure, so the end is still recorded.
    let gpu_call_block = if tile.is_some() {
        quote! {{ #krate::trace::block_starts(); #gpu_call; #krate::trace::block_ends(); }}
    } else {
        quote! {{ #krate::trace::block_starts(); (|| #gpu_call)(); #krate::trace::block_ends(); }}
    };
    // A cooperative kernel's second entry, `name__watched`: the same body
    // with the watched barrier (`cg_kernel::cg::barrier::watched`).
    let watched_entry = watched_body.as_ref().map(|b| {
        let entry = format_ident!("{}__watched", name);
        let call = match &tile {
            Some(Tile { default, .. }) => {
                quote! {{ #krate::trace::block_starts(); unsafe { #watched_fn::<{ #default }>( #( #idents, )* #barrier ) }; #krate::trace::block_ends(); }}
            }
            None => quote! {{ #krate::trace::block_starts(); (|| #b)(); #krate::trace::block_ends(); }},
        };
        quote! {
            #[doc(hidden)]
            #gpu_cfg
            #[unsafe(no_mangle)]
            #[allow(improper_gpu_kernel_arg, non_snake_case, clippy::too_many_arguments)]
            #( #other_attrs )*
            #vis unsafe extern "gpu-kernel" fn #entry( #params #barrier: *mut u32 ) #call
        }
    });
    let host_block = if tile.is_some() {
        quote! {{ #host_body }}
    } else {
        host_body
    };

    // Both builds check the sizing functions' signatures (and use their imports).
    let sizing_checks = {
        let shared_type = if tile.is_some() { quote!(fn(u32, u32) -> u32) } else { quote!(fn(u32) -> u32) };
        let shared = options.shared_memory.iter().map(|p| quote! { const _: #shared_type = #p; });
        let over = options.overread.iter().map(|p| quote! { const _: fn(u32) -> usize = #p; });
        quote! { #( #shared )* #( #over )* }
    };
    let def_doc = format!("The launch definition of [`{name_str}`]: its PTX entry name, parameters, launch contract and dynamic shared memory.");
    let entry_name = &name_str;
    let registered = format_ident!("__REGISTERED_{}", def);
    Ok(quote! {
        #generic_body
        #sizing_checks
        #outer_uses

        #( #docs )*
        #gpu_cfg
        #[unsafe(no_mangle)]
        // `In<T>` and `Out<T>` are `#[repr(transparent)]` pointers: `.param .u64` in the PTX.
        #[allow(improper_gpu_kernel_arg, clippy::too_many_arguments)]
        #( #other_attrs )*
        #vis unsafe extern "gpu-kernel" fn #name( #params ) #gpu_call_block

        #watched_entry

        #( #docs )*
        #[cfg(not(target_arch = "nvptx64"))]
        // A kernel's parameters cannot be gathered into a struct (a
        // parameter is a buffer or a number), so many of them is no smell.
        #[allow(clippy::too_many_arguments)]
        #( #other_attrs )*
        #vis unsafe fn #name( #params ) #host_block

        #[doc = #def_doc]
        #[cfg(not(target_arch = "nvptx64"))]
        // Its type is the kernel's parameters, spelled where the kernel spells them.
        #[allow(clippy::type_complexity)]
        #vis const #def: #def_type = {
            // SAFETY: the macro names the definition after the entry it emitted
            // above, with that entry's own parameters, and declares `GridSync`
            // wherever the attribute says `cooperative`; the crate is the one
            // compiling this kernel, and the shared memory the kernel's own
            // function.
            unsafe {
                #krate::kernels::KernelDef::new(
                    #entry_name,
                    &[ #( #names ),* ],
                    #name as _,
                    #tile_info,
                    #overread,
                )
                #emulator_only
                #bounds_def
                #block_shared
            }
        };
        #bounds_global

        #[cfg(not(target_arch = "nvptx64"))]
        #[#krate::kernels::linkme::distributed_slice(#krate::kernels::REGISTERED)]
        #[linkme(crate = #krate::kernels::linkme)]
        static #registered: #krate::kernels::Registered = #register;
    })
}

/// `tokens` with every span `span`, except inside groups that keep their own
/// (the parameter types, which carry the learner's).
fn respan(tokens: Tokens, span: proc_macro2::Span) -> Tokens {
    tokens
        .into_iter()
        .map(|mut t| {
            if !matches!(t, TokenTree::Group(_)) {
                t.set_span(span);
            }
            t
        })
        .collect()
}

/// Declares a GPU kernel: `cg_kernel::kernel` documents its options, with an example.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let result = parse_options(attr.into()).and_then(|o| expand(o, syn::parse(item)?));
    match result {
        Ok(tokens) => tokens.into(),
        Err(e) => {
            let span = e.span();
            let msg = e.to_compile_error();
            quote_spanned!(span=> #msg).into()
        }
    }
}
