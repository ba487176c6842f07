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

/// CUDA's device headers, read from the provisioned CUDA include folder
/// (see `provision::DEVICE_HEADERS`), never from the student's folder: they may
/// be included only as `<name>`. Host headers of that folder
/// (`cuda_runtime_api.h`, ...) stay refused.
pub const DEVICE: &[&str] = &[
    "cuda_fp16.h",
    "cuda_bf16.h",
    "cooperative_groups.h",
    "cooperative_groups/reduce.h",
    "cooperative_groups/scan.h",
    "cooperative_groups/memcpy_async.h",
];

pub fn is_allowed(name: &str) -> bool {
    ALLOWED.iter().any(|h| h.name == name) || is_device(name)
}

pub fn is_device(name: &str) -> bool {
    DEVICE.contains(&name)
}

/// Whether `text` may include a device header (a mention in a comment counts
/// too: it only costs a lookup of the provisioned headers).
pub fn uses_device_headers(text: &str) -> bool {
    DEVICE.iter().any(|h| text.contains(h))
}

/// "<stdio.h>, <cstdio>, ..." for messages.
pub fn allowed_list() -> String {
    ALLOWED
        .iter()
        .map(|h| h.name)
        .chain(DEVICE.iter().copied())
        .map(|n| format!("<{n}>"))
        .collect::<Vec<_>>()
        .join(", ")
}
