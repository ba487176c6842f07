//! Structure checks of the tiled kernels, read from the PTX: the tiles live in
//! shared memory, and every phase has both barriers of the notes' kernel.
//!
//! The barriers are judged first by what they do (measured::barriers: the
//! simulator's race check on the measured product), and read from the PTX
//! where the simulator cannot run the kernel, and to name the missing barrier.
//! Counting `bar.sync` is not enough: the compiler unrolls the loop over the
//! phases (even one with a run-time trip count), so a kernel with one barrier
//! per phase can show several in its PTX. Instead we follow the order of the
//! shared-memory stores, shared-memory loads and barriers inside the phase loop
//! (the innermost loop of the text that both stores and loads shared memory;
//! the whole body where there is none), treating it as the loop it is
//! (cyclically): a barrier must separate every store followed by a load (phase
//! loaded -> products) and every load followed by a store (products -> next
//! phase's load). Barriers and accesses before or after the loop (an extra
//! `__syncthreads()` under an `if`, tiles cleared first) say nothing of it.

use anyhow::Result;
use kit::inspect::KernelPtx;
use kit::require;

pub fn shared_tiles(k: &KernelPtx) -> Result<String> {
    require(k.uses_shared() && k.writes_shared() && k.reads_shared(), || {
        format!(
            "{} does not use shared memory: the PTX does not both store to and load from a `__shared__` array. \
             Stage each phase's tiles of M and N in `__shared__ float Ms[TILE][TILE], Ns[TILE][TILE]` and take \
             the products from there. (Tiles that are stored but never read do not count: the compiler removes \
             them.)",
            k.name
        )
    })?;
    Ok(format!("{} bytes of shared memory", k.static_shared_bytes()))
}

/// One event of interest in a kernel's PTX, in text order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Store,
    Load,
    Barrier,
}

/// Both barriers of every phase (see the module comment).
pub fn two_barriers(ptx: &str, kernel: &str) -> Result<String> {
    let barriers = kit::inspect::kernel(ptx, kernel).map(|k| events(&k)).unwrap_or_default();
    let barriers = barriers.iter().filter(|&&e| e == Event::Barrier).count();
    let events = phase_loop_events(ptx, kernel).unwrap_or_default();
    require(barriers > 0, || {
        format!(
            "{kernel} has no barrier: the PTX has no `bar.sync`. The threads of a block do not run in step; each \
             phase needs `__syncthreads()` after loading the tiles (so no thread reads an element that another \
             has not stored yet) and again after the products (so no thread overwrites a tile that others are \
             still reading)"
        )
    })?;
    let Some(gaps) = missing_barriers(&events) else {
        // No shared loads or stores to order (the accesses go through generic pointers): fall back to counting.
        require(barriers >= 2, || {
            format!(
                "{kernel} has only one barrier; each phase needs two: after loading the tiles and after the products"
            )
        })?;
        return Ok(format!("{barriers} barriers"));
    };
    require(!gaps.before_use, || {
        format!(
            "{kernel} reads the shared tiles with no barrier after storing them. The threads of a block do not \
             run in step: without `__syncthreads()` between loading a phase's tiles and using them, a thread \
             can read an element that another thread has not stored yet"
        )
    })?;
    require(!gaps.before_reload, || {
        format!(
            "{kernel} stores the next phase's tiles with no barrier after the products of this one. Each phase \
             needs a second `__syncthreads()` after its products: otherwise a fast thread loads the next tile \
             over values that slower threads are still reading. (Alternating between two pairs of tiles needs \
             only one barrier per phase: store the next phase's tiles into the pair this phase does not read)"
        )
    })?;
    Ok(String::new())
}

/// Which barrier is missing somewhere, if any.
#[derive(Debug, PartialEq, Eq)]
pub struct Gaps {
    /// A store followed by a load with no barrier between: the first barrier.
    pub before_use: bool,
    /// A load followed by a store with no barrier between: the second barrier.
    pub before_reload: bool,
}

/// `None` when there is no shared store or no shared load to order.
pub fn missing_barriers(events: &[Event]) -> Option<Gaps> {
    // Each shared access with the number of barriers before it in the text.
    let mut seen = 0;
    let mut accesses = Vec::new();
    for &e in events {
        match e {
            Event::Barrier => seen += 1,
            access => accesses.push((access, seen)),
        }
    }
    let has = |kind| accesses.iter().any(|&(a, _)| a == kind);
    if !has(Event::Store) || !has(Event::Load) {
        return None;
    }
    let mut gaps = Gaps { before_use: false, before_reload: false };
    for (i, &(a, before_a)) in accesses.iter().enumerate() {
        let (b, before_b) = accesses[(i + 1) % accesses.len()];
        // Barriers between a and the next access b; around the loop's back edge for the last one.
        let between = if i + 1 < accesses.len() { before_b - before_a } else { seen - before_a + before_b };
        match (a, b) {
            (Event::Store, Event::Load) if between == 0 => gaps.before_use = true,
            (Event::Load, Event::Store) if between == 0 => gaps.before_reload = true,
            _ => {}
        }
    }
    Some(gaps)
}

/// Shared stores, shared loads and barriers of a PTX body, in text order.
pub fn events(k: &KernelPtx) -> Vec<Event> {
    k.instructions().filter_map(event).collect()
}

/// The event an opcode is, if any.
fn event(op: &str) -> Option<Event> {
    const BARRIERS: [&str; 6] =
        ["bar.sync", "barrier.sync", "bar.red", "barrier.red", "barrier.cta.sync", "barrier.cta.red"];
    if op.starts_with("st.shared") {
        Some(Event::Store)
    } else if op.starts_with("ld.shared") {
        Some(Event::Load)
    } else if BARRIERS.iter().any(|b| op.starts_with(b)) {
        Some(Event::Barrier)
    } else {
        None
    }
}

/// One line of a kernel's body that matters to the phase loop.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Line {
    Event(Event),
    Label(String),
    /// A branch (`bra`, guarded or not) to a label.
    Branch(String),
}

/// The events of the phase loop of `kernel` in `ptx` (see the module comment),
/// or `None` when the kernel is not in the text.
pub fn phase_loop_events(ptx: &str, kernel: &str) -> Option<Vec<Event>> {
    let lines = body_lines(ptx, kernel)?;
    let events = |range: &[Line]| -> Vec<Event> {
        range.iter().filter_map(|l| if let Line::Event(e) = l { Some(*e) } else { None }).collect()
    };
    let both = |e: &[Event]| e.contains(&Event::Store) && e.contains(&Event::Load);
    // Every back edge (a branch to a label earlier in the text) closes a loop.
    let mut best: Option<(usize, usize)> = None;
    for (j, line) in lines.iter().enumerate() {
        let Line::Branch(target) = line else { continue };
        let Some(i) = lines[..j].iter().position(|l| matches!(l, Line::Label(t) if t == target)) else { continue };
        let innermost = best.is_none_or(|(a, b)| j - i < b - a);
        if both(&events(&lines[i..=j])) && innermost {
            best = Some((i, j));
        }
    }
    Some(match best {
        Some((i, j)) => events(&lines[i..=j]),
        None => events(&lines),
    })
}

/// Labels, branches, shared stores and loads, and barriers of `kernel`'s body, in text order.
fn body_lines(ptx: &str, kernel: &str) -> Option<Vec<Line>> {
    let mut text = ptx.lines().skip_while(|l| !is_entry_of(l, kernel));
    text.next()?;
    let mut lines = Vec::new();
    for raw in text.take_while(|l| !l.starts_with('}')) {
        let code = raw.split("//").next().unwrap_or("").trim();
        if let Some(label) = code.strip_suffix(':') {
            lines.push(Line::Label(label.trim().to_string()));
            continue;
        }
        // Without a `@p` guard: the opcode, then its operands.
        let code = if code.starts_with('@') { code.split_once(char::is_whitespace).map_or("", |x| x.1) } else { code };
        let mut words = code.split_whitespace();
        let Some(op) = words.next() else { continue };
        if op == "bra" || op.starts_with("bra.") {
            if let Some(target) = words.next() {
                lines.push(Line::Branch(target.trim_end_matches(';').to_string()));
            }
        } else if let Some(e) = event(op) {
            lines.push(Line::Event(e));
        }
    }
    Some(lines)
}

/// `.visible .entry name(` (or `.entry name (`), the first line of the kernel.
fn is_entry_of(line: &str, kernel: &str) -> bool {
    line.split_once(".entry").is_some_and(|(_, rest)| {
        let rest = rest.trim_start();
        rest.strip_prefix(kernel).is_some_and(|after| after.trim_start().starts_with('(') || after.trim().is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use Event::*;

    fn gaps(e: &[Event]) -> Option<(bool, bool)> {
        missing_barriers(e).map(|g| (g.before_use, g.before_reload))
    }

    #[test]
    fn the_notes_pattern_passes_also_unrolled() {
        assert_eq!(gaps(&[Store, Store, Barrier, Load, Load, Barrier]), Some((false, false)));
        let twice = [Store, Store, Barrier, Load, Barrier, Store, Store, Barrier, Load, Barrier];
        assert_eq!(gaps(&twice), Some((false, false)));
        // Loop rotated in the text: the body starts at the products.
        assert_eq!(gaps(&[Load, Load, Barrier, Store, Store, Barrier]), Some((false, false)));
    }

    #[test]
    fn one_barrier_fails_even_when_unrolled_to_several() {
        // Only the first barrier: the text wraps from the products to the next loads.
        assert_eq!(gaps(&[Store, Store, Barrier, Load, Load]), Some((false, true)));
        // ... unrolled twice: two bar.sync in the PTX, still one per phase.
        assert_eq!(gaps(&[Store, Barrier, Load, Store, Barrier, Load]), Some((false, true)));
        // Only the second barrier.
        assert_eq!(gaps(&[Store, Store, Load, Load, Barrier]), Some((true, false)));
        assert_eq!(gaps(&[Store, Load, Store, Load]), Some((true, true)));
    }

    #[test]
    fn nothing_to_order_without_both_kinds() {
        assert_eq!(gaps(&[Barrier, Barrier]), None);
        assert_eq!(gaps(&[Store, Barrier]), None);
    }

    const PTX: &str = r#"
.visible .entry other(.param .u64 p)
{
	bar.sync 	0;
	ret;
}
.visible .entry matmul_tiled(
	.param .u64 matmul_tiled_param_0
)
{
	.reg .pred 	%p<2>;
	// demoted variable
	.shared .align 4 .b8 _ZZ12matmul_tiledE2Ms[1024];
$L__BB0_2:
	st.shared.f32 	[%rd1], %f1;
	@%p1 st.shared.f32 	[%rd2], %f2;
	bar.sync 	0;
	ld.shared.f32 	%f3, [%rd3];
	ld.shared.v2.f32 	{%f4, %f5}, [%rd4];
	fma.rn.f32 	%f6, %f3, %f4, %f6;
	barrier.sync 	0;
	@%p1 bra 	$L__BB0_2;
	ret;
}
"#;

    #[test]
    fn reads_the_right_kernel_from_ptx() {
        let body = kit::inspect::kernel(PTX, "matmul_tiled").unwrap();
        assert_eq!(events(&body), [Store, Store, Barrier, Load, Load, Barrier]);
        assert!(two_barriers(PTX, "matmul_tiled").is_ok());
        assert_eq!(events(&kit::inspect::kernel(PTX, "other").unwrap()), [Barrier]);
        let err = two_barriers(PTX, "other").unwrap_err().to_string();
        assert!(err.contains("only one barrier"), "{err}");
        assert!(kit::inspect::kernel(PTX, "matmul").is_none());
    }

    #[test]
    fn messages_name_the_missing_barrier() {
        let one = PTX.replace("\tbarrier.sync \t0;\n", "");
        let err = two_barriers(&one, "matmul_tiled").unwrap_err().to_string();
        assert!(err.contains("after the products"), "{err}");
        let first = PTX.replace("\tbar.sync \t0;\n", "");
        let err = two_barriers(&first, "matmul_tiled").unwrap_err().to_string();
        assert!(err.contains("no barrier after storing"), "{err}");
        let none = first.replace("\tbarrier.sync \t0;\n", "");
        assert!(two_barriers(&none, "matmul_tiled").unwrap_err().to_string().contains("has no barrier"));
    }

    /// Tiles cleared before the loop behind an extra barrier under an `if`,
    /// and read once more after it: only the loop's own barriers count.
    const OUTSIDE: &str = r#"
.visible .entry matmul_tiled(
	.param .u64 matmul_tiled_param_0
)
{
	@%p1 bra 	$L__BB0_2;
	st.shared.u32 	[%rd3], %r10;
	bar.sync 	0;
$L__BB0_2:
	@%p2 bra 	$L__BB0_5;
$L__BB0_4:                              // =>This Inner Loop Header
	st.shared.f32 	[%rd3], %f6;
	st.shared.f32 	[%rd4], %f7;
	bar.sync 	0;
	ld.shared.f32 	%f8, [%rd6];
	bar.sync 	0;
	@%p3 bra 	$L__BB0_4;
$L__BB0_5:
	ld.shared.f32 	%f9, [%rd6];
	ret;
}
"#;

    #[test]
    fn barriers_outside_the_phase_loop_do_not_count() {
        assert_eq!(phase_loop_events(OUTSIDE, "matmul_tiled").unwrap(), [Store, Store, Barrier, Load, Barrier]);
        assert!(two_barriers(OUTSIDE, "matmul_tiled").is_ok());
        // Read as one cycle, the read after the loop wraps to the clearing store with no barrier between.
        let whole = events(&kit::inspect::kernel(OUTSIDE, "matmul_tiled").unwrap());
        assert_eq!(gaps(&whole), Some((false, true)));
        // The loop's own second barrier missing is still found.
        let one = OUTSIDE.replacen("\tbar.sync \t0;\n\t@%p3", "\t@%p3", 1);
        let err = two_barriers(&one, "matmul_tiled").unwrap_err().to_string();
        assert!(err.contains("after the products"), "{err}");
        // No loop at all: the whole body, cyclically.
        assert_eq!(phase_loop_events(PTX, "other").unwrap(), [Barrier]);
    }
}
