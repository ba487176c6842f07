//! What every compiled file sees before its first line: the constants of
//! `<math.h>`, `<float.h>` and `<limits.h>` that CUDA code takes for granted
//! (`INFINITY`, `FLT_MAX`, `INT_MAX`, ...). NVRTC has no `<math.h>`
//! (`identifier "INFINITY" is undefined`), the limits only where a file
//! includes the in-memory `<limits.h>` or `<float.h>`, and an exercise file
//! may include nothing from disk, so a student could not get `INFINITY` at
//! all; clang's CUDA
//! wrapper and nvcc's `cuda_runtime.h` define most of them already, so each
//! is guarded by `#ifndef` and the compiler's own definition wins.
//!
//! NVRTC reads it as a pre-included in-memory header (`--pre-include`, as
//! `-include` does: the student's line numbers are untouched); clang gets it
//! at the top of its input followed by `#line 1`, as the defines are.

/// The name NVRTC knows the prelude by (never includable from an exercise
/// file: it is not among `headers::ALLOWED`).
pub(crate) const NAME: &str = "cuda_lab_prelude.h";

/// The prelude. The limits are spelled exactly as the in-memory `<limits.h>`
/// and `<float.h>` spell them (headers.rs), so that a file that includes
/// those too redefines nothing differently (a test keeps them equal). The
/// special floats are CUDA's own (`CUDART_INF_F`, `CUDART_NAN_F` of
/// `math_constants.h`): NVRTC knows no `__builtin_huge_valf`, and `1.0f / 0.0f`
/// stays a division in the kernel. Like CUDA's, they are device code, not
/// constant expressions: a `__constant__` initialiser cannot use them.
pub(crate) const TEXT: &str = "\
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef HUGE_VALF
#define HUGE_VALF __int_as_float(0x7f800000)
#endif
#ifndef HUGE_VAL
#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef FLT_MAX
#define FLT_MAX 3.402823466e+38F
#endif
#ifndef FLT_MIN
#define FLT_MIN 1.175494351e-38F
#endif
#ifndef FLT_EPSILON
#define FLT_EPSILON 1.192092896e-07F
#endif
#ifndef DBL_MAX
#define DBL_MAX 1.7976931348623158e+308
#endif
#ifndef DBL_MIN
#define DBL_MIN 2.2250738585072014e-308
#endif
#ifndef DBL_EPSILON
#define DBL_EPSILON 2.2204460492503131e-16
#endif
#ifndef INT_MAX
#define INT_MAX 2147483647
#endif
#ifndef INT_MIN
#define INT_MIN (-2147483647 - 1)
#endif
#ifndef UINT_MAX
#define UINT_MAX 4294967295U
#endif
";

/// The names the prelude defines (for tests and the docs).
pub fn names() -> impl Iterator<Item = &'static str> {
    TEXT.lines().filter_map(|l| l.strip_prefix("#define ")).filter_map(|l| l.split_whitespace().next())
}

#[cfg(test)]
mod tests {
    /// Every limit the prelude shares with an in-memory header is defined
    /// there with the same text: including `<limits.h>` after the prelude
    /// must not redefine a macro differently.
    #[test]
    fn the_prelude_spells_the_limits_as_the_headers_do() {
        let defines = |text: &str| -> Vec<(String, String)> {
            text.lines()
                .filter_map(|l| l.strip_prefix("#define "))
                .filter_map(|l| l.split_once(' '))
                .map(|(k, v)| (k.to_string(), v.trim().to_string()))
                .collect()
        };
        let headers: Vec<(String, String)> = crate::headers::ALLOWED.iter().flat_map(|h| defines(h.text)).collect();
        let mut shared = 0;
        for (name, value) in defines(super::TEXT) {
            for (_, theirs) in headers.iter().filter(|(n, _)| *n == name) {
                assert_eq!(&value, theirs, "{name}");
                shared += 1;
            }
        }
        assert!(shared >= 9, "FLT_*, DBL_*, INT_*, UINT_MAX: {shared}");
    }
}
