//! What a launch of an `.entry` must match: its parameter list, its
//! `__launch_bounds__` and its static shared memory, as the PTX declares them.
//!
//! `cuLaunchKernel` copies whatever bytes it is given: a kernel whose student
//! dropped a parameter reads the next argument in its place, and one that turned
//! `int n` into `float n` reads the int's bits as a float. Neither crashes; both
//! give numbers that make no sense. And a launch the driver refuses says only
//! `CUDA_ERROR_INVALID_VALUE`. Reading the declaration first turns each of these
//! into one message that says what to fix.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::kernel_ptx::kernel;
use super::view::SharedArray;
use super::{parsed, text};
use crate::backend::Arg;

/// The declaration of one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryDecl {
    pub params: Vec<PtxParam>,
    /// The most threads a block may have: `.maxntid`, from `__launch_bounds__`.
    pub max_threads: Option<u32>,
    /// Bytes of `__shared__` memory the kernel declares with a fixed size.
    pub static_shared_bytes: usize,
}

/// One `.param` of an `.entry`, e.g. `.param .u64 pi_global_param_0` or
/// `.param .align 8 .b8 k_param_1[16]` (a struct passed by value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxParam {
    /// The PTX type without its dot: `u64`, `s32`, `f32`, `b8`, ...
    pub ty: String,
    /// Bytes it takes in the parameter buffer (element size times array length).
    pub bytes: usize,
}

/// How a type's bits are read: the driver cannot convert, so an int given to a
/// `float` parameter is a mismatch even at the same size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Integer,
    Float,
    /// `.b` types: raw bits (structs, unions); only the size must fit.
    Bits,
}

impl PtxParam {
    fn class(&self) -> Class {
        match self.ty.as_bytes().first() {
            Some(b'u' | b's') => Class::Integer,
            Some(b'f') => Class::Float,
            _ => Class::Bits,
        }
    }

    /// Whether the kernel reads `arg` as the value the grader means.
    pub fn accepts(&self, arg: &Arg) -> bool {
        let (bytes, class) = arg_layout(arg);
        bytes == self.bytes && (self.class() == Class::Bits || self.class() == class)
    }

    /// In the words of C, for a student.
    pub fn describe(&self) -> String {
        match (self.ty.as_str(), self.bytes) {
            ("u64" | "s64" | "b64", _) => "pointer or 64-bit integer".into(),
            ("u32" | "s32", _) => "int".into(),
            ("u16" | "s16", _) => "short".into(),
            ("u8" | "s8", 1) => "char".into(),
            ("f32", _) => "float".into(),
            ("f64", _) => "double".into(),
            ("f16", _) => "half".into(),
            (_, bytes) => format!("{bytes}-byte value"),
        }
    }
}

fn arg_layout(arg: &Arg) -> (usize, Class) {
    match arg {
        Arg::Ptr(_) | Arg::I64(_) | Arg::U64(_) => (8, Class::Integer),
        Arg::I32(_) | Arg::U32(_) => (4, Class::Integer),
        Arg::F32(_) => (4, Class::Float),
        Arg::F64(_) => (8, Class::Float),
    }
}

fn describe_arg(arg: &Arg) -> &'static str {
    match arg {
        Arg::Ptr(_) => "pointer",
        Arg::I32(_) => "int",
        Arg::U32(_) => "unsigned int",
        Arg::I64(_) => "long long",
        Arg::U64(_) => "unsigned long long",
        Arg::F32(_) => "float",
        Arg::F64(_) => "double",
    }
}

/// The declaration of every `.entry` of a module, by kernel name. A kernel
/// whose parameter list cannot be read is left out: the driver decides then.
pub fn entry_decls(ptx: &str) -> HashMap<String, EntryDecl> {
    let param = |(ty, bytes)| PtxParam { ty, bytes };
    let Some(m) = parsed::read(ptx) else {
        return text::headers(ptx)
            .into_iter()
            .map(|(name, params, max_threads)| {
                let static_shared_bytes = kernel(ptx, &name).map_or(0, |k| k.static_shared_bytes());
                let params = params.into_iter().map(param).collect();
                (name, EntryDecl { params, max_threads, static_shared_bytes })
            })
            .collect();
    };
    let mut found = HashMap::new();
    for f in parsed::kernels(&m) {
        let Some(params) = parsed::params(f) else { continue };
        let view = parsed::kernel_view(&m, f);
        let static_shared_bytes = view.shared.iter().filter_map(SharedArray::static_bytes).sum();
        let params = params.into_iter().map(param).collect();
        found.insert(f.name.clone(), EntryDecl { params, max_threads: parsed::max_threads(f), static_shared_bytes });
    }
    found
}

/// A launch whose arguments do not fit the kernel's parameters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.explain())]
pub struct WrongSignature {
    pub kernel: String,
    pub declared: Vec<PtxParam>,
    pub passed: Vec<Arg>,
}

impl WrongSignature {
    fn explain(&self) -> String {
        let declared: Vec<String> = self.declared.iter().map(PtxParam::describe).collect();
        let passed: Vec<&str> = self.passed.iter().map(describe_arg).collect();
        let mut s = format!(
            "`{}` takes {} ({}) but the grader passes {} ({})",
            self.kernel,
            count(declared.len()),
            declared.join(", "),
            count(passed.len()),
            passed.join(", ")
        );
        let mismatch = self.declared.iter().zip(&self.passed).position(|(p, a)| !p.accepts(a));
        if let (true, Some(i)) = (declared.len() == passed.len(), mismatch) {
            let _ = write!(
                s,
                ": parameter {} is declared `{}` where the grader passes `{}`",
                i + 1,
                declared[i],
                passed[i]
            );
        }
        s + ". Keep the parameter list of the stub exactly as it is"
    }
}

fn count(n: usize) -> String {
    format!("{n} parameter{}", if n == 1 { "" } else { "s" })
}

/// Checks `args` against `kernel`'s declared parameters.
pub fn check_args(kernel: &str, declared: &[PtxParam], args: &[Arg]) -> Result<(), WrongSignature> {
    let fits = declared.len() == args.len() && declared.iter().zip(args).all(|(p, a)| p.accepts(a));
    if fits {
        return Ok(());
    }
    Err(WrongSignature { kernel: kernel.into(), declared: declared.to_vec(), passed: args.to_vec() })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = r#"
.version 8.0
.target sm_75
.address_size 64
.visible .entry pi_global(
	.param .u64 pi_global_param_0,
	.param .u64 pi_global_param_1,
	.param .u32 pi_global_param_2,
	.param .u64 pi_global_param_3
)
{
	ret;
}
.visible .entry no_params()
{
	ret;
}
.visible .entry mixed(
	.param .f32 mixed_param_0,
	.param .align 8 .b8 mixed_param_1[16],
	.param .u64 .ptr .global .align 4 mixed_param_2,
	.param .s8 mixed_param_3
)
.maxntid 128, 1, 1
{
	.shared .align 4 .b8 _ZZ5mixedE3big[400000];
	.shared .align 4 .u32 _ZZ5mixedE10block_hits;
	ret;
}
"#;

    fn p(ty: &str, bytes: usize) -> PtxParam {
        PtxParam { ty: ty.into(), bytes }
    }

    #[test]
    fn reads_every_entry_s_declaration() {
        let all = entry_decls(PTX);
        assert_eq!(all.len(), 3);
        assert_eq!(all["pi_global"].params, [p("u64", 8), p("u64", 8), p("u32", 4), p("u64", 8)]);
        assert_eq!(all["pi_global"].max_threads, None);
        assert_eq!(all["no_params"].params, []);
        assert_eq!(all["mixed"].params, [p("f32", 4), p("b8", 16), p("u64", 8), p("s8", 1)]);
        assert_eq!(all["mixed"].max_threads, Some(128));
        assert_eq!(all["mixed"].static_shared_bytes, 400_004);
    }

    #[test]
    fn the_stub_s_arguments_fit() {
        let params = &entry_decls(PTX)["pi_global"].params;
        let args = [Arg::Ptr(1), Arg::Ptr(2), Arg::I32(3), Arg::Ptr(4)];
        assert_eq!(check_args("pi_global", params, &args), Ok(()));
        // Signedness is not in the bits the driver copies.
        let args = [Arg::U64(1), Arg::I64(2), Arg::U32(3), Arg::Ptr(4)];
        assert_eq!(check_args("pi_global", params, &args), Ok(()));
    }

    #[test]
    fn a_dropped_parameter_is_named_with_both_lists() {
        let params = [p("u64", 8), p("u64", 8), p("u64", 8)];
        let args = [Arg::Ptr(1), Arg::Ptr(2), Arg::I32(3), Arg::Ptr(4)];
        let e = check_args("pi_global", &params, &args).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`pi_global` takes 3 parameters (pointer or 64-bit integer, pointer or 64-bit integer, \
             pointer or 64-bit integer) but the grader passes 4 parameters (pointer, pointer, int, pointer). \
             Keep the parameter list of the stub exactly as it is"
        );
    }

    #[test]
    fn same_size_but_float_for_int_is_a_mismatch() {
        let params = [p("u64", 8), p("u64", 8), p("f32", 4), p("u64", 8)];
        let args = [Arg::Ptr(1), Arg::Ptr(2), Arg::I32(3), Arg::Ptr(4)];
        let e = check_args("pi_global", &params, &args).unwrap_err();
        assert!(e.to_string().contains(": parameter 3 is declared `float` where the grader passes `int`."), "{e}");
        // A wider integer is a mismatch too: the kernel would read 4 bytes past the int.
        let params = [p("u64", 8), p("u64", 8), p("s64", 8), p("u64", 8)];
        assert!(check_args("pi_global", &params, &args).is_err());
    }

    #[test]
    fn raw_bits_only_need_the_size() {
        let params = [p("b32", 4), p("b8", 8)];
        assert!(check_args("k", &params, &[Arg::F32(1.0), Arg::U64(2)]).is_ok());
        assert!(check_args("k", &params, &[Arg::F32(1.0), Arg::I32(2)]).is_err());
    }

    #[test]
    fn an_entry_without_a_parameter_list_takes_none() {
        let all = entry_decls(".entry bare\n.maxntid 64, 2, 1\n{\n\tret;\n}\n");
        assert_eq!(all["bare"], EntryDecl { params: vec![], max_threads: Some(128), static_shared_bytes: 0 });
    }

    #[test]
    fn unreadable_lists_are_left_out() {
        let ptx = ".entry odd(\n\t.param .weird\n)\n{ ret; }\n.entry ok(\n\t.param .u32 ok_param_0\n)\n{ ret; }";
        let all = entry_decls(ptx);
        assert!(!all.contains_key("odd"));
        assert_eq!(all["ok"].params, [p("u32", 4)]);
    }
}
