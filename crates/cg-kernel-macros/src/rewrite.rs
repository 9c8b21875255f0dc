//! The kernel body as `#[kernel]` rewrites it: the calls whose meaning its
//! options change (`this_grid()` in a cooperative kernel, `this_cluster()`
//! in a cluster kernel, `cg::...` spellings of both), found by name and path
//! at any depth, and the `shared_array!`s made into slices of the block's
//! shared memory.

use super::*;

/// `TWO_WORDS` from `two_words`.
pub(crate) fn screaming(name: &str) -> String {
    name.to_uppercase()
}

/// Whether `tokens` (at any depth) hold `name` as a bare name and as
/// `cg::name`.
pub(crate) fn names(tokens: Tokens, name: &str) -> (bool, bool) {
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
pub(crate) fn path_before(out: &[TokenTree]) -> (Vec<String>, usize) {
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
pub(crate) fn ours(segments: &[String], krate: &[String]) -> bool {
    match segments {
        [] => true,
        [cg] => cg == "cg",
        [before @ .., cg] if cg == "cg" && before == krate => true,
        [krate, cg] => cg == "cg" && ["gpu", "cg_kernel", "crate"].contains(&krate.as_str()),
        _ => false,
    }
}

/// The segments of `path`, without a leading `::`.
pub(crate) fn segments(path: &Path) -> Vec<String> {
    path.segments.iter().map(|s| s.ident.to_string()).collect()
}

/// `tokens` with every call of `name` with no arguments by one of this
/// project's spellings (`this_grid()`, `cg::this_grid()`, `cg_kernel::cg::this_grid()`,
/// `::cg_kernel::cg::this_grid()`, `renamed::cg::this_grid()` for `crate = renamed`)
/// replaced by `call`, spanned where the call was. A method `x.name()`, a
/// definition `fn name()` and a function of that name elsewhere
/// (`my::this_grid()`) are left alone.
pub(crate) fn rewrite_calls(tokens: Tokens, name: &str, call: &Tokens, krate: &[String]) -> Tokens {
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
pub(crate) fn nested_fn_naming(tokens: Tokens, name: &str) -> Option<proc_macro2::Span> {
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

/// The hidden last parameter of both GPU entries of a cooperative kernel:
/// this launch's memory, the watched barrier's lines and the grid
/// collectives' scratch (`cg_kernel::cg::barrier::launch_memory`, ABI in `docs/abi.md`).
pub(crate) fn launch_param() -> syn::Ident {
    syn::Ident::new("__cg_launch", proc_macro2::Span::mixed_site())
}

/// Which function a kernel's body is written into: the host's (which the
/// emulator runs), the plain GPU entry, or a cooperative kernel's watched
/// GPU entry. The two GPU entries of a cooperative kernel take the launch's
/// memory in their hidden last parameter; the host's does not.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    Host,
    Plain,
    Watched,
}

/// The body of a `#[kernel(cooperative)]` or `#[kernel(cluster)]` kernel:
/// `this_grid` / `this_cluster` and `cg::...` there are the grid that may
/// `sync()` (`cg_kernel::cg::cooperative_kernel`) and the cluster that may be used
/// (`cg_kernel::cg::cluster_kernel`). Beside it, uses of the module's own names,
/// which the body's shadow, so that the module's imports stay used (and a
/// missing one is still an error).
///
/// For a GPU entry of a cooperative kernel (`entry` not [`Entry::Host`]),
/// its `this_grid()` is made with the entry's hidden parameter, the launch's
/// memory; in the watched entry its `sync()` is the watched barrier
/// (`cg_kernel::cg::barrier::watched`), which the host launches above
/// `WATCHED_ABOVE_BLOCKS` blocks.
pub(crate) fn declared_body(f: &ItemFn, o: &Options, entry: Entry) -> (Tokens, Tokens) {
    let stmts = &f.block.stmts;
    let krate = o.krate();
    let spelled = o.krate.as_ref().map(segments).unwrap_or_default();
    let (scope, swapped): (Tokens, &[(&str, Tokens)]) = match (o.cooperative, o.cluster) {
        (true, false) if entry == Entry::Watched => (quote!(cooperative_kernel::watched::{cg, this_grid}), &[]),
        (true, false) if entry == Entry::Plain => (quote!(cooperative_kernel::launched::{cg, this_grid}), &[]),
        (true, false) => (quote!(cooperative_kernel::{cg, this_grid}), &[("this_grid", quote!(GridGroup<#krate::cg::Ordinary>))]),
        (false, true) => (quote!(cluster_kernel::{cg, this_cluster}), &[("this_cluster", quote!(ClusterGroup<#krate::cg::Unclustered>))]),
        _ if entry == Entry::Watched => (quote!(cooperative_cluster_kernel::watched::{cg, this_cluster, this_grid}), &[]),
        _ if entry == Entry::Plain => (quote!(cooperative_cluster_kernel::launched::{cg, this_cluster, this_grid}), &[]),
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
        let launch = launch_param();
        let grid = match entry {
            Entry::Watched => quote!(#krate::cg::cooperative_kernel::watched::this_grid(#launch)),
            Entry::Plain => quote!(#krate::cg::cooperative_kernel::launched::this_grid(#launch)),
            Entry::Host => quote!(#krate::cg::cooperative_kernel::this_grid()),
        };
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
/// `array(k, T, N, shared_array)` for the k-th, and the `(T, N)` of each in
/// order. One inside an item declared in the body (a nested `fn`, an
/// `impl`, a `trait` or a `mod`) is an error: such an item can be called
/// from elsewhere, from a kernel whose shared memory does not hold the array.
pub(crate) fn rewrite_shared_arrays(
    tokens: Tokens,
    found: &mut Vec<(Tokens, Tokens)>,
    array: &dyn Fn(usize, &Tokens, &Tokens, &proc_macro2::Ident) -> Tokens,
) -> Result<Tokens> {
    rewrite_arrays_in(tokens, found, array, None)
}

/// [`rewrite_shared_arrays`] at one level of the token tree; `nested` names
/// the item declared in the body that these tokens are inside, if any.
fn rewrite_arrays_in(
    tokens: Tokens,
    found: &mut Vec<(Tokens, Tokens)>,
    array: &dyn Fn(usize, &Tokens, &Tokens, &proc_macro2::Ident) -> Tokens,
    nested: Option<&str>,
) -> Result<Tokens> {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Tokens::new();
    // An item keyword seen at this level whose body (the next brace group
    // here) is an item of its own: `fn name`, `impl`, `trait name`, `mod name`.
    let mut item: Option<&'static str> = None;
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
            if let Some(kind) = nested {
                return Err(Error::new(
                    macro_name.span(),
                    format!(
                        "`shared_array!` inside {kind} declared in the kernel's body: that item can be called from another kernel, whose shared memory holds no such array; declare the array in the kernel's own body and pass it to the item as a `DynamicShared<T>`"
                    ),
                ));
            }
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
            TokenTree::Ident(id) => {
                let named = matches!(trees.get(i + 1), Some(TokenTree::Ident(_)));
                match id.to_string().as_str() {
                    "fn" if named => item = Some("a `fn`"),
                    "impl" => item = Some("an `impl`"),
                    "trait" if named => item = Some("a `trait`"),
                    "mod" if named => item = Some("a `mod`"),
                    _ => {}
                }
                out.extend([trees[i].clone()]);
            }
            TokenTree::Group(g) => {
                let body_of = if g.delimiter() == Delimiter::Brace { item.take() } else { None };
                let inner = rewrite_arrays_in(g.stream(), found, array, body_of.or(nested))?;
                let mut group = proc_macro2::Group::new(g.delimiter(), inner);
                group.set_span(g.span());
                out.extend([TokenTree::Group(group)]);
            }
            TokenTree::Punct(p) if p.as_char() == ';' => {
                // `fn name(..);` in a trait, say: no body at this level.
                item = None;
                out.extend([trees[i].clone()]);
            }
            t => out.extend([t.clone()]),
        }
        i += 1;
    }
    Ok(out)
}

/// The kernel's fixed shared regions: each `shared_array!` call of `f`'s
/// body replaced by its array, and `options.tail` set to the bytes they
/// take at the end of the kernel's shared memory, with the grid
/// collectives' in a cooperative kernel (`cg_kernel::cg::GRID_SHARED_BYTES`,
/// after the arrays); returns the items that size the arrays (none where
/// the body has no call). The arrays' start is read in the kernel from the
/// launch's shared memory (`cg_kernel::mem::shared_tail_start`), never
/// computed from the kernel's `shared_memory` function, so the two cannot
/// disagree whatever that function does.
pub(crate) fn static_arrays(options: &mut Options, f: &mut ItemFn) -> Result<Tokens> {
    let krate = options.krate();
    let name = f.sig.ident.clone();
    // Named after the kernel as written (`format_ident!` drops a raw
    // identifier's `r#`), not upper-cased: `foo` and `Foo` are two kernels.
    let layout = format_ident!("__cg_shared_arrays_{}", name);
    let sizes = format_ident!("__cg_shared_array_sizes_{}", name);
    let tail = format_ident!("__cg_shared_tail_{}", name);
    let grid_bytes = if options.cooperative { quote!(#krate::cg::GRID_SHARED_BYTES as usize) } else { quote!(0usize) };
    // The call stays a call of the macro the kernel's author imported
    // (so that the import is used), at its internal arm, which names
    // the `unsafe` constructor; the block that makes it is this one.
    // The array's bytes and alignment as the body sees its type and
    // length are checked, at compile time, against those the definition
    // counted outside the body (a name the body shadows would differ).
    let array = |k: usize, ty: &Tokens, len: &Tokens, macro_name: &proc_macro2::Ident| {
        quote! {
            {
                // Array lengths, which the type check evaluates (a
                // `const` assert would wait for code generation): a
                // mismatch is "expected an array with a size of ...".
                let _counted_outside_the_body: [(); #sizes[#k].0] = [(); ::core::mem::size_of::<#ty>() * (#len)];
                let _aligned_outside_the_body: [(); #sizes[#k].1] = [(); ::core::mem::align_of::<#ty>()];
                #[allow(unused_unsafe)]
                // SAFETY: the kernel's shared memory ends with these arrays,
                // at these offsets from where its tail starts, then the grid
                // collectives' bytes in a cooperative kernel (its definition
                // asks for them: `#[kernel]` counted them, with this type and
                // length, checked above; `shared_tail_start` checked that
                // the launch holds them); each call is one array.
                let array = unsafe {
                    #macro_name!(@static #ty, #krate::mem::shared_tail_start(#tail) + #layout.0[#k], #len)
                };
                array
            }
        }
    };
    let mut found = Vec::new();
    let block = rewrite_shared_arrays(quote::ToTokens::to_token_stream(&f.block), &mut found, &array)?;
    if found.is_empty() {
        options.tail = Some(grid_bytes);
        return Ok(Tokens::new());
    }
    *f.block = syn::parse2(block)?;
    let count = found.len();
    let items = found.iter().map(|(ty, len)| quote! { (::core::mem::size_of::<#ty>() * (#len), ::core::mem::align_of::<#ty>()) });
    options.tail = Some(quote!(#tail));
    Ok(quote! {
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        const #sizes: [(usize, usize); #count] = [ #( #items ),* ];
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        const #layout: ([usize; #count], usize) = #krate::mem::static_arrays_layout(#sizes);
        /// The bytes at the end of the kernel's shared memory: its
        /// `shared_array!`s, then, in a cooperative kernel, the grid
        /// collectives' from the next 16-byte boundary.
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        const #tail: usize = if #grid_bytes > 0 { #layout.1.div_ceil(16) * 16 + #grid_bytes } else { #layout.1 };
    })
}
