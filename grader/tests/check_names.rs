//! Names that say what is measured (issue 51): every structure and
//! performance check next to the measurement it reads. A check named after a
//! technique (`shared-...`) must require it; one that measures the technique's
//! effect (coalesced rows, few global loads) is named after the effect, so that
//! a kernel reaching it another way (a warp-shuffle transpose, a
//! `__syncthreads_count` tally) passes a check whose name is still true.
//!
//! A new check fails `every_check_is_listed_with_its_measurement` until it has a row here.

/// `(exercise::part::kind::name, what it measures, whether that requires shared memory)`.
const TABLE: &[(&str, &str, bool)] = &[
    ("ex01::global::structure::global-atomics", "the counter is updated with global atomics (measured)", false),
    (
        "ex01::shared::structure::few-global-atomics-per-block",
        "at most 2 global atomics per block, coalesced loads of x and y (measured)",
        false,
    ),
    ("ex01::shared::perf::faster-than-global-atomics", "time against one global atomic per hit", false),
    (
        "ex02::dot::structure::parallel-block-reduction",
        "no global atomic per element, at most 64 warp-level shared loads per block (shared memory or shuffles), \
         loads using half their sectors' bytes (measured)",
        false,
    ),
    ("ex02::dot::perf::share-of-copy-bandwidth", "bandwidth as a share of the copy yardstick's", false),
    (
        "ex03::tiled::structure::tiled-global-loads",
        "at most 0.5 global loads per multiply-add, tile loads coalesced (measured)",
        false,
    ),
    ("ex03::tiled::structure::two-barriers", "no shared access racing another thread's, and a barrier", true),
    ("ex03::tiled::perf::faster-than-naive", "time against the naive product", false),
    (
        "ex03::rect::structure::tiled-global-loads",
        "at most 0.5 global loads per multiply-add, tile loads coalesced (measured)",
        false,
    ),
    ("ex03::rect::structure::two-barriers", "no shared access racing another thread's, and a barrier", true),
    ("ex03::rect::perf::faster-than-naive", "time against the naive rectangular product", false),
    ("ex04::v1::structure::global-only", "the window read from global memory, no shared array", false),
    (
        "ex04::v2::structure::shared-window",
        "about one global and SEQ_LEN shared loads per start position (measured)",
        true,
    ),
    ("ex04::v2::structure::barrier", "a barrier between staging the window and reading it (PTX)", false),
    ("ex04::v2::perf::share-of-v1", "time against v1", false),
    (
        "ex04::v3::structure::shared-window",
        "about one global and SEQ_LEN shared loads per start position (measured)",
        true,
    ),
    ("ex04::v3::structure::barrier", "a barrier between staging the window and reading it (PTX)", false),
    ("ex04::v3::structure::sequence-in-constant", "the sequence read by constant loads, not global (measured)", false),
    ("ex04::v3::perf::share-of-v1", "time against v1", false),
    (
        "ex05::stencil::structure::few-global-loads-per-output",
        "about one global load per output, the fill coalesced (measured)",
        false,
    ),
    ("ex05::stencil::perf::share-of-copy", "bandwidth as a share of the copy yardstick's", false),
    (
        "ex06::load::structure::dynamic-shared",
        "an `extern __shared__` array (PTX) read where the kernel reads its input (measured)",
        true,
    ),
    ("ex06::load::perf::faster-than-global-reads", "time against the kernel reading global memory", false),
    (
        "ex07::coalesced::structure::coalesced-reads-and-writes",
        "load and store sectors per request at most 8: rows read and written (measured; no shared memory needed)",
        false,
    ),
    ("ex07::coalesced::perf::faster-than-naive", "time against the naive transpose", false),
    (
        "ex07::padded::structure::coalesced-reads-and-writes",
        "load and store sectors per request at most 8: rows read and written (measured; no shared memory needed)",
        false,
    ),
    ("ex07::padded::structure::padded-tile", "a shared tile, at most 2 passes per shared request (measured)", true),
    ("ex07::padded::perf::share-of-copy", "bandwidth as a share of the copy yardstick's", false),
    ("ex07::padded::perf::faster-than-unpadded-tile", "time against the unpadded shared-tile transpose", false),
    (
        "ex08::interleaved::structure::shared-tree",
        "a shared array (PTX), the interleaved pattern's divergence, no atomics tree",
        true,
    ),
    (
        "ex08::sequential::structure::shared-tree",
        "a shared array (PTX), the sequential pattern's divergence, no atomics tree",
        true,
    ),
    ("ex08::sequential::perf::faster-than-interleaved", "time against the interleaved kernel", false),
    ("ex09::picture::structure::coalesced", "sectors per request of the loads and stores (measured)", false),
    ("ex09::picture::perf::share-of-linear", "bandwidth as a share of the linear walk's", false),
    ("ex10::global::structure::one-atomic-per-byte", "one global atomic per input byte (measured)", false),
    ("ex10::private::structure::merged-once-per-bin", "one global atomic per bin per block (measured)", false),
    ("ex10::private::perf::faster-than-global-atomics", "time against one global atomic per byte", false),
    ("ex10::coarse::structure::merged-once-per-bin", "one global atomic per bin per block (measured)", false),
    ("ex10::coarse::structure::interleaved-reads", "sectors per request of the byte loads (measured)", false),
    ("ex10::coarse::perf::share-of-coarse", "time against the grader's coarsened kernel", false),
    ("ex11::kogge-stone::structure::one-barrier-per-step", "barriers per block: one per step (measured)", false),
    ("ex11::kogge-stone::structure::one-pass", "global traffic per element: one load and one store (measured)", false),
    (
        "ex11::brent-kung::structure::work-efficient",
        "additions per element under 2, one pass over global memory (measured)",
        false,
    ),
    ("ex11::brent-kung::perf::share-of-copy", "bandwidth as a share of the copy yardstick's", false),
    ("ex11::any-n::structure::global-traffic", "global traffic per element of both kernels (measured)", false),
    ("ex11::any-n::perf::share-of-copy", "bandwidth as a share of the copy yardstick's", false),
    ("ex12::naive::structure::coalesced", "sectors per request of the loads (measured)", false),
    ("ex12::constant::structure::mask-in-constant", "the mask read by constant loads (measured)", false),
    ("ex12::constant::perf::faster-than-global-mask", "time against the mask in global memory", false),
    (
        "ex12::tiled::structure::few-global-loads-per-output",
        "global loads per output near a tile with its halo's, the mask from constant memory (measured)",
        false,
    ),
    ("ex12::tiled::perf::faster-than-untiled", "time against the untiled kernel", false),
];

fn registered() -> Vec<String> {
    let mut names = Vec::new();
    for e in grader::registry::all() {
        for p in &e.parts {
            for c in &p.checks {
                if matches!(c.kind.label(), "structure" | "perf") {
                    names.push(format!("{}::{}::{}::{}", e.id, p.name, c.kind.label(), c.name));
                }
            }
        }
    }
    names
}

#[test]
fn every_check_is_listed_with_its_measurement() {
    let names = registered();
    let missing: Vec<&String> = names.iter().filter(|n| !TABLE.iter().any(|(t, _, _)| t == n)).collect();
    assert!(
        missing.is_empty(),
        "checks with no row in grader/tests/check_names.rs (name, what it measures, whether that needs shared \
         memory): {missing:?}"
    );
    let stale: Vec<&str> = TABLE.iter().map(|(t, _, _)| *t).filter(|t| !names.iter().any(|n| n == t)).collect();
    assert!(stale.is_empty(), "rows for checks that do not exist (renamed?): {stale:?}");
}

/// The promise of a name: a check named after shared memory requires it.
/// ex07's `shared-tile` passed a warp-shuffle transpose with no shared access
/// ("shared passes per request 0.00"): it is `coalesced-reads-and-writes` now.
#[test]
fn a_name_that_says_shared_measures_shared_memory() {
    let wrong: Vec<&str> = TABLE
        .iter()
        .filter(|(name, _, needs_shared)| name.rsplit("::").next().unwrap().contains("shared") && !needs_shared)
        .map(|(name, _, _)| *name)
        .collect();
    assert!(wrong.is_empty(), "named after shared memory, but what they measure does not need it: {wrong:?}");
    assert!(!registered().iter().any(|n| n.ends_with("::shared-tile")), "ex07's check keeps its new name");
}
