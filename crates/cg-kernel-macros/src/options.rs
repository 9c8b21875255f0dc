//! What `#[kernel(...)]` was asked for: its options, and the kernel's
//! `<const TILE: u32 = N>` parameter.

use super::*;

#[derive(Default)]
pub(crate) struct Options {
    pub(crate) cooperative: bool,
    pub(crate) emulator: bool,
    pub(crate) cluster: bool,
    pub(crate) shared_memory: Option<Path>,
    pub(crate) overread: Option<Path>,
    /// `launch_bounds(max_threads, min_blocks)`, min_blocks 0 if not given.
    pub(crate) launch_bounds: Option<(u32, u32)>,
    /// `crate = path`: where cg-kernel is, `::cg_kernel` if not given.
    pub(crate) krate: Option<Path>,
    /// `def = NAME`: the definition's name, the function's in capitals if not given.
    pub(crate) def: Option<syn::Ident>,
    /// `block_size = N`: the one block size the kernel's body is written for.
    pub(crate) block_size: Option<u32>,
    /// Not an option: the bytes at the end of the kernel's shared memory
    /// (its `shared_array!`s and, if cooperative, the grid collectives'),
    /// as an expression of type `usize`; set by `static_arrays`.
    pub(crate) tail: Option<Tokens>,
}

impl Options {
    /// The path every emitted item of cg-kernel is named by.
    pub(crate) fn krate(&self) -> Tokens {
        match &self.krate {
            Some(path) => quote!(#path),
            None => quote!(::cg_kernel),
        }
    }
}

pub(crate) fn parse_options(attr: Tokens) -> Result<Options> {
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
        } else if meta.path.is_ident("block_size") {
            let n = meta.value()?.parse::<syn::LitInt>()?.base10_parse::<u32>()?;
            if n == 0 || !n.is_multiple_of(32) || n > 1024 {
                return Err(meta.error("`block_size = N` takes whole warps: a multiple of 32, from 32 to 1024"));
            }
            o.block_size = Some(n);
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
                    "expected `cooperative`, `cluster`, `emulator`, `shared_memory = f`, `overread = f`, `launch_bounds(max_threads, min_blocks)`, `block_size = N`, `crate = path` or `def = NAME`",
                )
            );
        }
        Ok(())
    });
    syn::parse::Parser::parse2(parser, attr)?;
    // A block size is an upper bound too: the PTX's `.maxntid` says so.
    if let Some(n) = o.block_size {
        match o.launch_bounds {
            None => o.launch_bounds = Some((n, 0)),
            Some((max, _)) if max < n => {
                return Err(Error::new(proc_macro2::Span::call_site(), format!("`block_size = {n}` is more than `launch_bounds({max}, ..)` allows")));
            }
            Some(_) => {}
        }
    }
    Ok(o)
}

/// The kernel's `<const TILE: u32 = N>` parameter, if it has one.
pub(crate) struct Tile {
    pub(crate) ident: syn::Ident,
    pub(crate) default: Expr,
}

pub(crate) fn tile_param(f: &ItemFn) -> Result<Option<Tile>> {
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
