//! The only headers an exercise file may include, served from memory.
//!
//! Students write `#include <stdio.h>` or `<cuda_runtime.h>` out of habit; NVRTC
//! already knows `printf`, `sqrtf`, `atomicAdd`, ..., so most of these are
//! (nearly) empty. `stdint.h`, `limits.h` and `float.h` carry the few names
//! kernels really use, because NVRTC has no C library headers.

/// A header name (as written between `<>` or `""`) and its text.
pub struct Header {
    pub name: &'static str,
    pub text: &'static str,
}

macro_rules! stdint_body {
    () => {
        "#ifndef CUDA_LAB_STDINT_H
#define CUDA_LAB_STDINT_H
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef long long intptr_t;
typedef unsigned long long uintptr_t;
typedef long long intmax_t;
typedef unsigned long long uintmax_t;
#define INT8_MIN (-128)
#define INT16_MIN (-32767 - 1)
#define INT32_MIN (-2147483647 - 1)
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT8_MAX 127
#define INT16_MAX 32767
#define INT32_MAX 2147483647
#define INT64_MAX 9223372036854775807LL
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615ULL
#define SIZE_MAX 18446744073709551615ULL
#define INT64_C(c) c##LL
#define UINT64_C(c) c##ULL
#endif
"
    };
}

macro_rules! limits_body {
    () => {
        "#ifndef CUDA_LAB_LIMITS_H
#define CUDA_LAB_LIMITS_H
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define SHRT_MIN (-32767 - 1)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MIN (-2147483647 - 1)
#define INT_MAX 2147483647
#define UINT_MAX 4294967295U
#define LONG_MIN (-9223372036854775807L - 1)
#define LONG_MAX 9223372036854775807L
#define ULONG_MAX 18446744073709551615UL
#define LLONG_MIN (-9223372036854775807LL - 1)
#define LLONG_MAX 9223372036854775807LL
#define ULLONG_MAX 18446744073709551615ULL
#endif
"
    };
}

macro_rules! float_body {
    () => {
        "#ifndef CUDA_LAB_FLOAT_H
#define CUDA_LAB_FLOAT_H
#define FLT_MAX 3.402823466e+38F
#define FLT_MIN 1.175494351e-38F
#define FLT_EPSILON 1.192092896e-07F
#define DBL_MAX 1.7976931348623158e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.2204460492503131e-16
#endif
"
    };
}

const EMPTY: &str = "/* cuda-lab: nothing needed under NVRTC */\n";

/// Sorted as shown to students in refusals.
pub const ALLOWED: &[Header] = &[
    Header { name: "stdio.h", text: EMPTY },
    Header { name: "cstdio", text: EMPTY },
    Header { name: "stdint.h", text: stdint_body!() },
    Header {
        name: "cstdint",
        text: concat!(
            stdint_body!(),
            "namespace std { using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;\n",
            "using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;\n",
            "using ::intptr_t; using ::uintptr_t; using ::intmax_t; using ::uintmax_t; }\n"
        ),
    },
    Header { name: "math.h", text: EMPTY },
    Header {
        name: "cmath",
        // NVRTC declares these globally; <cmath> users write std::sqrt.
        text: "#ifndef CUDA_LAB_CMATH\n#define CUDA_LAB_CMATH\nnamespace std {\n\
using ::abs; using ::fabs; using ::sqrt; using ::cbrt; using ::rsqrt; using ::exp; using ::exp2;\n\
using ::log; using ::log2; using ::log10; using ::pow; using ::sin; using ::cos; using ::tan;\n\
using ::asin; using ::acos; using ::atan; using ::atan2; using ::sinh; using ::cosh; using ::tanh;\n\
using ::floor; using ::ceil; using ::round; using ::trunc; using ::fmod; using ::fmin; using ::fmax;\n\
using ::fma; using ::hypot; using ::isnan; using ::isinf; using ::isfinite; using ::signbit; using ::copysign;\n\
}\n#endif\n",
    },
    Header { name: "limits.h", text: limits_body!() },
    Header { name: "climits", text: limits_body!() },
    Header { name: "float.h", text: float_body!() },
    Header { name: "cfloat", text: float_body!() },
    Header { name: "assert.h", text: EMPTY },
    Header { name: "cassert", text: EMPTY },
    Header { name: "cuda.h", text: EMPTY },
    Header { name: "cuda_runtime.h", text: EMPTY },
    Header { name: "device_launch_parameters.h", text: EMPTY },
];

/// A family of CUDA's device headers a course may allow (cuda-lab.toml
/// `[headers] allow`), read from the machine's CUDA toolkit or the
/// provisioned CUDA include folder (see `provision::DEVICE_HEADERS`, which
/// carries CCCL: CUB and libcu++), never from the student's folder: they may
/// be included only as `<name>`. Host headers of that folder
/// (`cuda_runtime_api.h`, ...) stay refused whatever a course allows.
#[derive(Debug, PartialEq, Eq)]
pub struct Family {
    /// As cuda-lab.toml names it.
    pub name: &'static str,
    /// For people.
    pub about: &'static str,
    /// The headers of the family, exactly as included.
    pub headers: &'static [&'static str],
    /// A folder whose `.cuh` headers all belong to the family (`cub/`), where any.
    pub folder: Option<&'static str>,
}

pub const FAMILIES: &[Family] = &[
    Family { name: "cuda_fp16", about: "half precision (`__half`)", headers: &["cuda_fp16.h"], folder: None },
    Family { name: "cuda_bf16", about: "bfloat16 (`__nv_bfloat16`)", headers: &["cuda_bf16.h"], folder: None },
    Family {
        name: "cooperative_groups",
        about: "cooperative groups, with their reduce, scan and memcpy_async collectives",
        headers: &[
            "cooperative_groups.h",
            "cooperative_groups/reduce.h",
            "cooperative_groups/scan.h",
            "cooperative_groups/memcpy_async.h",
        ],
        folder: None,
    },
    Family {
        name: "cub",
        about: "CUB's block- and warp-level primitives (`cub::BlockReduce`, `cub::BlockScan`, ...; CCCL)",
        headers: &["cub/cub.cuh"],
        folder: Some("cub/"),
    },
];

/// The families allowed where a course says nothing: today's device headers
/// (CUB is the course's to allow).
pub const DEFAULT_FAMILIES: &[&str] = &["cuda_fp16", "cuda_bf16", "cooperative_groups"];

/// Every family's headers (the old list of device headers, CUB's umbrella header).
pub fn device_names() -> impl Iterator<Item = &'static str> {
    FAMILIES.iter().flat_map(|f| f.headers.iter().copied())
}

pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.name == name)
}

impl Family {
    /// Whether `name` (as included) is a header of this family. A folder's
    /// headers are plain relative paths: no `..`, no empty or odd components.
    pub fn holds(&self, name: &str) -> bool {
        if self.headers.contains(&name) {
            return true;
        }
        let Some(rest) = self.folder.and_then(|f| name.strip_prefix(f)) else { return false };
        rest.ends_with(".cuh")
            && rest.split('/').all(|c| {
                !c.is_empty()
                    && !c.starts_with('.')
                    && c.chars().all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '.' | '-'))
            })
    }
}

/// The family `name` belongs to, allowed or not.
pub fn family_of(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().find(|f| f.holds(name))
}

/// Whether `name` is one of the in-memory headers every exercise may include.
pub fn is_served(name: &str) -> bool {
    ALLOWED.iter().any(|h| h.name == name)
}

/// Whether `name` is a device header of any family (allowed or not): such a
/// header is never read from the student's folder.
pub fn is_device(name: &str) -> bool {
    family_of(name).is_some()
}

/// Whether `text` may include a device header (a mention in a comment counts
/// too: it only costs a lookup of the provisioned headers).
pub fn uses_device_headers(text: &str) -> bool {
    device_names().any(|h| text.contains(h)) || FAMILIES.iter().filter_map(|f| f.folder).any(|d| text.contains(d))
}

/// Whether `text` may include a CUB header.
pub fn uses_cub(text: &str) -> bool {
    text.contains("cub/")
}

/// "<stdio.h>, <cstdio>, ..." for messages: the in-memory headers and the
/// headers of the `families` allowed.
pub fn allowed_list(families: &[&'static Family]) -> String {
    ALLOWED
        .iter()
        .map(|h| format!("<{}>", h.name))
        .chain(
            families
                .iter()
                .flat_map(|f| f.headers.iter().map(|h| format!("<{h}>")).chain(f.folder.map(|d| format!("<{d}...>")))),
        )
        .collect::<Vec<_>>()
        .join(", ")
}
