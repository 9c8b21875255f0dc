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
//! `block_size = N` (the one block size the body is written for, whole warps: a launch of another
//! is refused by name, and the PTX says `.maxntid N`),
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

mod options;
mod rewrite;

use options::*;
use rewrite::*;

/// The tile sizes `tiled_partition` accepts, each of which `with_tile` can instantiate.
const TILES: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// The most parameters a kernel may take: the tuples cg-kernel implements
/// `Params` for (the definition's type) and cg-launcher `Args` (what a
/// launch passes), and `cg_kernel::kernels::MAX_PARAMS`.
const MAX_PARAMS: usize = 16;

fn expand(mut options: Options, mut f: ItemFn) -> Result<Tokens> {
    let statics = static_arrays(&mut options, &mut f)?;
    let mut out = expand_kernel(&options, f)?;
    out.extend(statics);
    Ok(out)
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
        if options.cooperative || options.cluster { declared_body(&f, options, Entry::Host) } else { (quote::ToTokens::to_token_stream(&f.block), quote! {}) };
    // A cooperative kernel's GPU entries take the launch's memory in a hidden
    // last parameter, and make their `this_grid()` with it.
    let gpu_body = if options.cooperative { declared_body(&f, options, Entry::Plain).0 } else { body.clone() };
    let watched_body = options.cooperative.then(|| declared_body(&f, options, Entry::Watched).0);
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
    let block_size_def = match options.block_size {
        Some(n) => quote!(.with_block_size(#n)),
        None => quote!(),
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
    let tail = options.tail.clone().unwrap_or_else(|| quote!(0usize));
    let overread = match &options.overread {
        Some(p) => quote!(#p),
        None => quote!(#krate::kernels::no_overread),
    };

    let watched_fn = format_ident!("__{}_body_watched", name);
    let launch = launch_param();
    // The plain GPU entry's hidden parameter, and its body's, where it has one.
    let (launch_param_decl, launch_arg) = if options.cooperative { (quote!(#launch: *mut u32), quote!(#launch)) } else { (quote!(), quote!()) };
    let (gpu_call, host_body, generic_body, tile_info) = match &tile {
        Some(Tile { ident, default }) => {
            let call = quote! { #body_fn::<{ #default }>( #( #idents ),* ) };
            let gpu_call = quote! { #body_fn::<{ #default }>( #( #idents, )* #launch_arg ) };
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
                    #vis unsafe fn #watched_fn<const #ident: u32>( #params #launch: *mut u32 ) #b
                }
            });
            // The host's body (which `with_tile` instantiates for the
            // emulator), and the plain GPU entry's, which takes the launch's
            // memory in a cooperative kernel.
            let generic = if options.cooperative {
                quote! {
                    #[doc(hidden)]
                    #[cfg(not(target_arch = "nvptx64"))]
                    #[inline(always)]
                    #[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
                    #( #other_attrs )*
                    #vis unsafe fn #body_fn<const #ident: u32>( #params ) #body
                    #[doc(hidden)]
                    #gpu_cfg
                    #[inline(always)]
                    #[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
                    #( #other_attrs )*
                    #vis unsafe fn #body_fn<const #ident: u32>( #params #launch_param_decl ) #gpu_body
                    #watched_generic
                    #tile_check
                }
            } else {
                quote! {
                    #[doc(hidden)]
                    #[inline(always)]
                    #[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
                    #( #other_attrs )*
                    #vis unsafe fn #body_fn<const #ident: u32>( #params ) #body
                    #watched_generic
                    #tile_check
                }
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
            (quote! { unsafe { #gpu_call } }, quote! { unsafe { #call } }, generic, info)
        }
        None => (quote! { #gpu_body }, quote! { #body }, quote! {}, quote! { None }),
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
                quote! {{ #krate::trace::block_starts(); unsafe { #watched_fn::<{ #default }>( #( #idents, )* #launch ) }; #krate::trace::block_ends(); }}
            }
            None => quote! {{ #krate::trace::block_starts(); (|| #b)(); #krate::trace::block_ends(); }},
        };
        quote! {
            #[doc(hidden)]
            #gpu_cfg
            #[unsafe(no_mangle)]
            #[allow(improper_gpu_kernel_arg, non_snake_case, clippy::too_many_arguments)]
            #( #other_attrs )*
            #vis unsafe extern "gpu-kernel" fn #entry( #params #launch: *mut u32 ) #call
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
        #vis unsafe extern "gpu-kernel" fn #name( #params #launch_param_decl ) #gpu_call_block

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
                #block_size_def
                #block_shared
                .with_tail_shared(#tail)
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
