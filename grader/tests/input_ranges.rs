//! What the READMEs promise about inputs, held to what the grader tests
//! (issue 52): every correctness input holds the ends of its README's value
//! range (a uniform draw almost never yields 0, the largest value or one
//! value over and over), and no README promises a size beyond the largest
//! one a check runs on some backend. Both need no compiler and no GPU.

use crate::support;

use kit::inputs::{holds_bits, rng_for};

/// Seeds to draw each exercise's inputs with: the edges are planted, not
/// drawn, so every seed must hold them.
const SEEDS: [u64; 3] = [1, 42, 0xC0FFEE];

#[test]
fn every_correctness_input_holds_the_ends_of_its_range() {
    for seed in SEEDS {
        let rng = |what: &str| rng_for(seed, what);
        // ex01: the origin and the largest corner of [0, 1)^2.
        for n in ex01_pi::SIZES {
            let (x, y) = ex01_pi::points_with_seeded_hits(&mut rng("ex01"), n);
            let points: Vec<(f32, f32)> = x.into_iter().zip(y).collect();
            assert!(ex01_pi::EDGES.iter().all(|e| points.contains(e)), "ex01 n={n}");
        }
        // ex02: a and b in [0, 1), at every size the bound is checked at.
        for n in ex02_dot::SIZES.into_iter().filter(|&n| n >= ex02_dot::EDGES.len()) {
            let (a, b) = ex02_dot::correctness_inputs(&mut rng("ex02"), n);
            assert!(holds_bits(&a, &ex02_dot::EDGES) && holds_bits(&b, &ex02_dot::EDGES), "ex02 n={n}");
        }
        // ex03: M and N in [-1, 1), -0.0 as itself.
        assert!(ex03_matmul::EDGES.iter().any(|v| v.to_bits() == 0x8000_0000), "-0.0 is one of ex03's edges");
        for s in ex03_matmul::RECT_SHAPES.into_iter().filter(|s| s.m * s.k >= 4 && s.k * s.n >= 4) {
            let (m, n) = ex03_matmul::matrices(&mut rng("ex03"), s);
            assert!(holds_bits(&m, &ex03_matmul::EDGES) && holds_bits(&n, &ex03_matmul::EDGES), "ex03 {s:?}");
        }
        // ex05: the extremes of [-2^28, 2^28) and 0, and a whole window of each extreme.
        for n in ex05_stencil::SIZES {
            let v = ex05_stencil::cpu::padded_input(&mut rng("ex05"), n);
            assert!(holds_bits(&v, &ex05_stencil::cpu::EDGES), "ex05 n={n}");
            if n >= 512 {
                let run = |x: i32| v.windows(ex05_stencil::WINDOW).any(|w| w.iter().all(|&e| e == x));
                assert!(run(-ex05_stencil::cpu::MAX_ABS) && run(ex05_stencil::cpu::MAX_ABS - 1), "ex05 n={n}");
            }
        }
        // ex08 and ex11: both ends of their integer ranges.
        for n in ex08_reduction::SIZES.into_iter().filter(|&n| n >= 2) {
            assert!(holds_bits(&ex08_reduction::values(&mut rng("ex08"), n), &ex08_reduction::EDGES), "ex08 n={n}");
        }
        for n in ex11_scan::ANY_SIZES.into_iter().filter(|&n| n >= 2) {
            assert!(holds_bits(&ex11_scan::cpu::values(&mut rng("ex11"), n), &ex11_scan::cpu::EDGES), "ex11 n={n}");
        }
        // ex09: 0.0, the smallest subnormal and normal, the largest below 256.
        for (w, h) in ex09_picture::SIZES.into_iter().filter(|&(w, h)| w * h >= 4) {
            let image = ex09_picture::cpu::correctness_image(&mut rng("ex09"), w * h);
            assert!(holds_bits(&image, &ex09_picture::cpu::EDGES), "ex09 {w}x{h}");
        }
        assert!(ex09_picture::cpu::EDGES.contains(&0.0));
        // ex10: bytes 0x00 and 0xFF in every mixed input; one byte repeated
        // so often that each coarse block counts more than 16 bits hold.
        for (n, kind) in ex10_histogram::SIZES.into_iter().filter(|&(n, _)| n >= 2) {
            let data = ex10_histogram::cpu::correctness_bytes(&mut rng("ex10"), n, kind);
            match kind {
                ex10_histogram::cpu::Bytes::Same(_) => assert!(data.iter().all(|&b| b == data[0])),
                _ => assert!(holds_bits(&data, &ex10_histogram::cpu::EDGES), "ex10 n={n}"),
            }
        }
        // ex12: pixels 0 and the largest below 1.
        for pixels in [1 << 10, 45 * 29] {
            let image = ex12_convolution::cpu::image(&mut rng("ex12"), pixels);
            assert!(holds_bits(&image, &ex12_convolution::cpu::EDGES), "ex12 {pixels}");
        }
    }
    // More than 65 535 copies of one byte in one block of the coarse grid
    // (simulated: at most kit's simulator limit).
    let blocks = ex10_histogram::COARSE_TEST_BLOCKS as usize;
    assert!(
        ex10_histogram::SIZES.iter().any(|&(n, kind)| matches!(kind, ex10_histogram::cpu::Bytes::Same(_))
            && n / blocks > u16::MAX as usize
            && n <= kit::SIM_MAX_ELEMENTS),
        "a repeated byte that overflows 16-bit bins in every coarse block, on the simulator"
    );
}

/// A README's promise that a size goes up to some largest value, as written:
/// "`n` from 1 to 2³¹−1", "n from 0 to about 2^31", "for n up to 2^31 - 1",
/// "`width * height < 2^31`".
#[derive(Debug)]
struct Promise {
    readme: String,
    text: String,
    largest: u64,
}

/// The number that starts `s` ("2³¹−1", "2^31 - 1", "2^26", "16 777 259",
/// "about 2^31"), or None.
fn number(s: &str) -> Option<u64> {
    let s = s.trim_start().trim_start_matches("about ").trim_start_matches('`');
    let sup = |c: char| "⁰¹²³⁴⁵⁶⁷⁸⁹".chars().position(|d| d == c);
    let mut chars = s.chars().peekable();
    let mut base = String::new();
    while let Some(&c) = chars.peek() {
        // Digits, and the spaces between groups of three ("16 777 259").
        let group_space = c == ' ' && base.ends_with(|d: char| d.is_ascii_digit()) && {
            let next: String = chars.clone().skip(1).take(4).collect();
            next.len() >= 3
                && next.chars().take(3).all(|d| d.is_ascii_digit())
                && !next[3..].starts_with(|d: char| d.is_ascii_digit())
        };
        if !(c.is_ascii_digit() || group_space) {
            break;
        }
        base.push(c);
        chars.next();
    }
    let base: u64 = base.replace(' ', "").parse().ok()?;
    let mut exponent = String::new();
    if chars.peek() == Some(&'^') {
        chars.next();
        while let Some(&c) = chars.peek().filter(|c| c.is_ascii_digit()) {
            exponent.push(c);
            chars.next();
        }
    } else {
        while let Some(d) = chars.peek().and_then(|&c| sup(c)) {
            exponent.push(char::from(b'0' + d as u8));
            chars.next();
        }
    }
    let mut value = if exponent.is_empty() { base } else { base.checked_pow(exponent.parse().ok()?)? };
    let rest: String = chars.collect();
    let rest = rest.trim_start();
    if let Some(minus) = rest.strip_prefix('−').or_else(|| rest.strip_prefix("- ")).or_else(|| rest.strip_prefix('-'))
    {
        if let Some(k) = minus.trim_start().chars().next().and_then(|c| c.to_digit(10)) {
            value -= k as u64;
        }
    }
    Some(value)
}

/// Every promise of a largest size in the READMEs.
fn promises() -> Vec<Promise> {
    let root = support::workspace().join("exercises");
    let mut dirs: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    dirs.into_iter()
        .filter(|d| d.join("README.md").exists())
        .flat_map(|dir| {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            promises_in(&name, &std::fs::read_to_string(dir.join("README.md")).unwrap())
        })
        .collect()
}

/// The promises of a largest size in one README's text.
fn promises_in(readme: &str, text: &str) -> Vec<Promise> {
    const PATTERNS: [&str; 6] = ["n` from ", "n from ", "n` anything from ", "for n up to ", "height < ", "height` < "];
    // Paragraphs joined into one line each: a promise may wrap.
    let text = text.replace('\n', " ");
    let mut found = Vec::new();
    for pattern in PATTERNS {
        for (at, _) in text.match_indices(pattern) {
            // "n" as a word ("drawn from" is no promise).
            if pattern.starts_with('n') && text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let after = &text[at + pattern.len()..];
            let quote = text[at..].chars().take(pattern.chars().count() + 40).collect::<String>();
            // "from A up": no end at all.
            if pattern.contains("from") && after.split_whitespace().nth(1).is_some_and(|w| w.starts_with("up")) {
                found.push(Promise { readme: readme.to_string(), text: quote, largest: u64::MAX });
                continue;
            }
            // "from A to B": B is the promise; "up to B", "< B": B.
            let tail = match after.find(" to ") {
                Some(to) if pattern.contains("from") && to < 12 => &after[to + 4..],
                _ if pattern.contains("from") => continue,
                _ => after,
            };
            if let Some(largest) = number(tail) {
                found.push(Promise { readme: readme.to_string(), text: quote, largest });
            }
        }
    }
    found
}

/// The largest size each exercise's checks run (on some backend: the
/// simulator, a GPU's correctness checks, or the timed launches, whose every
/// output is checked). Where the timed size depends on the GPU, the
/// smallest the calibrated GPUs use.
fn largest_tested(readme: &str) -> u64 {
    let max = |sizes: &[usize]| *sizes.iter().max().unwrap() as u64;
    match readme {
        "ex01-pi" => max(&ex01_pi::SIZES).max(ex01_pi::PERF_POINTS as u64),
        "ex02-dot" => max(&ex02_dot::SIZES).max(max(&ex02_dot::EXACT_SIZES)),
        "ex04-dna" => ex04_dna::PERF_LETTERS as u64,
        "ex05-stencil" => max(&ex05_stencil::SIZES),
        "ex07-transpose" => {
            let side = ex07_transpose::PERF_MIN_SIDE as u64;
            ex07_transpose::SIZES.iter().map(|&(w, h)| (w * h) as u64).max().unwrap().max(side * side)
        }
        "ex08-reduction" => max(&ex08_reduction::SIZES).max(ex08_reduction::PERF_N as u64),
        "ex10-histogram" => ex10_histogram::SIZES.iter().map(|s| s.0 as u64).max().unwrap(),
        "ex11-scan" => max(&ex11_scan::SIZES).max(max(&ex11_scan::ANY_SIZES)),
        _ => 0,
    }
}

#[test]
fn no_readme_promises_a_size_no_check_reaches() {
    let all = promises();
    // The parser finds what it is for: the promises the READMEs make now.
    assert!(all.iter().any(|p| p.readme == "ex01-pi" && p.largest == 1 << 25), "{all:#?}");
    assert!(all.iter().any(|p| p.readme == "ex02-dot" && p.largest == 16_777_259), "{all:#?}");
    let broken: Vec<String> = all
        .iter()
        .filter(|p| p.largest > largest_tested(&p.readme))
        .map(|p| {
            format!(
                "{}/README.md promises sizes up to {} (\"{}…\"), but its largest tested size is {}: narrow the \
                 promise to what is graded, or add a check at that size",
                p.readme,
                p.largest,
                p.text,
                largest_tested(&p.readme)
            )
        })
        .collect();
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The test above can fail: the promises the READMEs made before issue 52
/// are each found, and each is beyond what its exercise tests.
#[test]
fn the_old_promises_fail_the_walk() {
    for (readme, old, largest) in [
        ("ex01-pi", "Any\n`n` from 1 to 2³¹−1 must work.", (1u64 << 31) - 1),
        ("ex02-dot", "**Sizes.** Any `n` from 1 to 2³¹−1 must work.", (1 << 31) - 1),
        ("ex10-histogram", "`data` holds `n` bytes, `n` anything from 0 to about 2^31.", 1 << 31),
        ("ex11-scan", "for every i < n, for n up\nto 2^31 - 1 (the `int` n; 8 GiB of input)", (1 << 31) - 1),
        ("ex07-transpose", "Any `width` and `height` from 1 up, with `width * height < 2^31`", 1 << 31),
        ("ex04-dna", "**Sizes and borders.** Any `n` from 8 up: `n − 7` is", u64::MAX),
    ] {
        let found = promises_in(readme, old);
        assert!(found.iter().any(|p| p.largest == largest), "{old}: {found:?}");
        assert!(found.iter().all(|p| p.largest > largest_tested(readme)), "{old}: {found:?}");
    }
    // And the promises they make now are read as written.
    let now = promises_in("ex02-dot", "Graded: `n` from 1 to 16 777 259, and the timed size");
    assert_eq!(now.iter().map(|p| p.largest).collect::<Vec<_>>(), [16_777_259]);
    assert_eq!(number("2²⁶ (the timed size)"), Some(1 << 26));
    assert_eq!(number("4 194 319, and"), Some(4_194_319));
    assert!(promises_in("ex11-scan", "Values are drawn from 1 to 100").is_empty(), "not a size");
}
