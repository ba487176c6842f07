//! The compact executable form of a kernel.
//!
//! Every operand is pre-resolved: a register is a slot in a per-warp register file
//! laid out slot-major (`slot * 32 + lane`), and immediates and special registers
//! (`%tid.x`, ...) are materialised into slots too, so an instruction never has to
//! ask "register or immediate?" per lane. Labels are instruction indices.

use std::collections::HashMap;

pub const LANES: usize = 32;

/// A register slot, pre-multiplied by 32: the index of lane 0 in the register file.
pub type Reg = u32;
/// A predicate register: one `u32` lane mask per warp.
pub type Pred = u16;

pub const NO_REG: Reg = u32::MAX;
pub const NO_PRED: Pred = u16::MAX;

/// `@%p` / `@!%p` on an instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard(pub u16);

impl Guard {
    pub const NONE: Guard = Guard(u16::MAX);
    pub fn new(p: Pred, neg: bool) -> Guard {
        Guard(p | if neg { 0x8000 } else { 0 })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    Global,
    Shared,
    Local,
    Const,
    /// The kernel's parameter buffer (read-only, same for all threads).
    KParam,
    Generic,
}

impl Space {
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Local => "local",
            Space::Const => "const",
            Space::KParam => "param",
            Space::Generic => "generic",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Addr {
    /// Base register, or `NO_REG` for an absolute address.
    pub base: Reg,
    /// The base register is 32 bits wide (its upper bits are ignored).
    pub base32: bool,
    pub offset: i64,
}

/// The width and signedness of a memory access element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemTy {
    pub size: u8,
    pub signed: bool,
}

/// A PTX scalar type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ty {
    U(u8),
    S(u8),
    B(u8),
    F(u8),
    Pred,
}

impl Ty {
    pub fn bits(self) -> u8 {
        match self {
            Ty::U(b) | Ty::S(b) | Ty::B(b) | Ty::F(b) => b,
            Ty::Pred => 1,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, Ty::F(_))
    }
    pub fn is_signed(self) -> bool {
        matches!(self, Ty::S(_))
    }
    pub fn parse(s: &str) -> Option<Ty> {
        Some(match s {
            "u8" => Ty::U(8),
            "u16" => Ty::U(16),
            "u32" => Ty::U(32),
            "u64" => Ty::U(64),
            "s8" => Ty::S(8),
            "s16" => Ty::S(16),
            "s32" => Ty::S(32),
            "s64" => Ty::S(64),
            "b8" => Ty::B(8),
            "b16" => Ty::B(16),
            "b32" => Ty::B(32),
            "b64" => Ty::B(64),
            "f16" => Ty::F(16),
            "f32" => Ty::F(32),
            "f64" => Ty::F(64),
            "pred" => Ty::Pred,
            _ => return None,
        })
    }
}

/// Float rounding modes (`.rn` is IEEE round-to-nearest-even).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rnd {
    Rn,
    Rz,
    Rm,
    Rp,
    /// `.approx` / `.full`: computed as `.rn` here.
    Approx,
}

/// Integer-to-integer rounding for float→float `cvt` (`.rni` etc.).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IRnd {
    None,
    Rni,
    Rzi,
    Rmi,
    Rpi,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IBin {
    Add,
    Sub,
    MulLo,
    MulHiS,
    MulHiU,
    /// `w` is the source width; the result has `2w` bits.
    MulWideS,
    MulWideU,
    DivS,
    DivU,
    RemS,
    RemU,
    MinS,
    MinU,
    MaxS,
    MaxU,
    And,
    Or,
    Xor,
    Shl,
    ShrS,
    ShrU,
    AddSat,
    SubSat,
    Mul24LoS,
    Mul24LoU,
    Mul24HiS,
    Mul24HiU,
    /// Packed 16-bit halves (`add.s16x2`, `min.relu.s16x2`, ...): each half on
    /// its own, as clang emits for `short2` arithmetic.
    Pair16(Pair16),
}

/// One packed 16-bit operation (`.u16x2`/`.s16x2`, PTX ISA 8.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pair16 {
    pub op: Pair16Op,
    pub signed: bool,
    /// `.relu` (`min`/`max` on `.s16x2`): a negative half becomes 0.
    pub relu: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pair16Op {
    Add,
    Sub,
    Min,
    Max,
}

impl Pair16 {
    /// The result for the 32-bit operands `x` and `y`.
    pub fn apply(self, x: u64, y: u64) -> u64 {
        let half = |v: u64, i: u32| {
            let h = (v >> (16 * i)) as u16;
            if self.signed {
                h as i16 as i64
            } else {
                h as i64
            }
        };
        (0..2).fold(0u64, |acc, i| {
            let (a, b) = (half(x, i), half(y, i));
            let mut v = match self.op {
                Pair16Op::Add => a.wrapping_add(b),
                Pair16Op::Sub => a.wrapping_sub(b),
                Pair16Op::Min => a.min(b),
                Pair16Op::Max => a.max(b),
            };
            if self.relu {
                v = v.max(0);
            }
            acc | ((v as u64 & 0xffff) << (16 * i))
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IUn {
    Mov,
    Not,
    Neg,
    Abs,
    Popc,
    Clz,
    Brev,
    Cnot,
    BfindS,
    BfindU,
    BfindSShift,
    BfindUShift,
    /// Zero-extend from `w` bits (also truncation).
    Zext,
    /// Sign-extend from `w` bits.
    Sext,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ITern {
    MadLo,
    MadHiS,
    MadHiU,
    MadWideS,
    MadWideU,
    Mad24LoS,
    Mad24LoU,
    SadS,
    SadU,
    BfeS,
    BfeU,
    /// `slct.T.s32 d, a, b, c`: `c >= 0 ? a : b`
    SlctS,
    /// `slct.T.f32 d, a, b, c`
    SlctF,
    ShfLWrap,
    ShfLClamp,
    ShfRWrap,
    ShfRClamp,
    Prmt,
    Lop3(u8),
    Dp4aSS,
    Dp4aUU,
    Dp4aSU,
    Dp4aUS,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FBin {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
    Copysign,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FUn {
    Mov,
    Neg,
    Abs,
    Sqrt,
    Rcp,
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomOp {
    Add,
    /// `atom.add.noftz.{f16,f16x2,bf16,bf16x2}` (round to nearest even).
    AddHalf(HFmt),
    Min,
    Max,
    Inc,
    Dec,
    Exch,
    Cas,
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TestpOp {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

/// Register-like values that are constant per thread during a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Special {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    SmId,
    NSmId,
    GridId,
    LaneMaskEq,
    LaneMaskLt,
    LaneMaskLe,
    LaneMaskGt,
    LaneMaskGe,
    DynamicSmemSize,
    /// `%total_smem_size`: the block's static and dynamic shared memory, in a
    /// GPU's 128-byte allocation units (the PTX ISA, sm_8x and sm_9x).
    TotalSmemSize,
    /// `%aggr_smem_size`: that with the 1 KiB a GPU reserves per block.
    AggrSmemSize,
    /// `WARP_SZ`: 32.
    WarpSize,
    /// `%envregN`: what the driver set there on a GPU ([`crate::device::envreg`]).
    EnvReg(u8),
    /// Registers that read 0 here (`%pmN`, `%cluster_ctarank`, ...).
    Zero,
    /// Registers that read 1 here (`%cluster_nctarank`, `%cluster_nctaid.x`, ...).
    One,
}

/// Half-precision formats: one 16-bit value, or two packed in 32 bits (the low
/// half is element 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HFmt {
    F16,
    F16x2,
    Bf16,
    Bf16x2,
}

impl HFmt {
    pub fn parse(s: &str) -> Option<HFmt> {
        Some(match s {
            "f16" => HFmt::F16,
            "f16x2" => HFmt::F16x2,
            "bf16" => HFmt::Bf16,
            "bf16x2" => HFmt::Bf16x2,
            _ => return None,
        })
    }
    pub fn bf16(self) -> bool {
        matches!(self, HFmt::Bf16 | HFmt::Bf16x2)
    }
    pub fn x2(self) -> bool {
        matches!(self, HFmt::F16x2 | HFmt::Bf16x2)
    }
}

/// Half-precision arithmetic (always round-to-nearest-even).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HOp {
    Add,
    Sub,
    Mul,
    Fma,
    Neg,
    Abs,
    Min,
    Max,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    IBin {
        op: IBin,
        w: u8,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    IUn {
        op: IUn,
        w: u8,
        d: Reg,
        a: Reg,
    },
    ITern {
        op: ITern,
        w: u8,
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    Bfi {
        w: u8,
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
        e: Reg,
    },
    FBin {
        op: FBin,
        f64: bool,
        rnd: Rnd,
        ftz: bool,
        sat: bool,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    FUn {
        op: FUn,
        f64: bool,
        rnd: Rnd,
        ftz: bool,
        sat: bool,
        d: Reg,
        a: Reg,
    },
    Fma {
        f64: bool,
        rnd: Rnd,
        ftz: bool,
        sat: bool,
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    Cvt {
        d: Reg,
        a: Reg,
        dst: Ty,
        src: Ty,
        rnd: Rnd,
        irnd: IRnd,
        sat: bool,
        ftz: bool,
    },
    /// Half-precision arithmetic; `b`/`c` are `NO_REG` when unused.
    Half {
        op: HOp,
        fmt: HFmt,
        ftz: bool,
        sat: bool,
        relu: bool,
        /// `.NaN` on `min`/`max`: a NaN operand gives NaN.
        nan: bool,
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
    },
    /// `setp.cmp.f16` (`q` = not `p`) or `.f16x2` (`p` from the low half, `q` the high).
    HalfSetp {
        cmp: Cmp,
        fmt: HFmt,
        ftz: bool,
        p: Pred,
        q: Pred,
        a: Reg,
        b: Reg,
    },
    /// `cvt.rn.{f16x2,bf16,bf16x2}.f32` (from `a`, and `b` into the low half of a
    /// pair) or `cvt.f32.bf16` (`to_f32`).
    HalfCvt {
        fmt: HFmt,
        to_f32: bool,
        d: Reg,
        a: Reg,
        b: Reg,
    },
    Setp {
        cmp: Cmp,
        ty: Ty,
        ftz: bool,
        p: Pred,
        q: Pred,
        a: Reg,
        b: Reg,
        comb: Option<(BoolOp, Pred, bool)>,
    },
    /// `set.cmp.dtype.stype`: all ones / 1.0 for true.
    Set {
        cmp: Cmp,
        ty: Ty,
        dty: Ty,
        ftz: bool,
        d: Reg,
        a: Reg,
        b: Reg,
        comb: Option<(BoolOp, Pred, bool)>,
    },
    Selp {
        d: Reg,
        a: Reg,
        b: Reg,
        p: Pred,
        neg: bool,
    },
    PLogic {
        op: BoolOp,
        d: Pred,
        a: Pred,
        na: bool,
        b: Pred,
        nb: bool,
    },
    Testp {
        op: TestpOp,
        f64: bool,
        p: Pred,
        a: Reg,
    },
    /// `mov.b64 %rd, {%r1, %r2}`: little-endian concatenation of `n` `bits`-wide parts.
    Pack {
        d: Reg,
        src: [Reg; 4],
        n: u8,
        bits: u8,
    },
    /// `mov.b64 {%r1, %r2}, %rd`
    Unpack {
        dst: [Reg; 4],
        n: u8,
        bits: u8,
        a: Reg,
    },
    Ld {
        space: Space,
        ty: MemTy,
        vec: u8,
        dst: [Reg; 4],
        addr: Addr,
    },
    St {
        space: Space,
        ty: MemTy,
        vec: u8,
        src: [Reg; 4],
        addr: Addr,
    },
    /// `atom` (with `d`) and `red` (`d == NO_REG`).
    Atom {
        space: Space,
        op: AtomOp,
        ty: Ty,
        d: Reg,
        addr: Addr,
        a: Reg,
        b: Reg,
    },
    Cvta {
        d: Reg,
        a: Reg,
        space: Space,
        to_generic: bool,
        w: u8,
    },
    Bra {
        target: u32,
    },
    /// `brx.idx`: to `Kernel::tables[table][idx]`, per lane.
    BrxIdx {
        idx: Reg,
        table: u32,
    },
    Exit,
    /// `bar.sync 0` / `barrier.sync 0`: the whole block.
    Bar,
    /// `bar.red.popc.u32` / `.and.pred` / `.or.pred` (`__syncthreads_count/and/or`).
    BarRed {
        mode: BarRedMode,
        d: Reg,
        dp: Pred,
        p: Pred,
        neg: bool,
    },
    /// `bar.warp.sync mask` (`__syncwarp`).
    WarpSync {
        mask: Reg,
    },
    Vote {
        mode: VoteMode,
        d: Reg,
        dp: Pred,
        a: Pred,
        neg: bool,
        mask: Reg,
    },
    Shfl {
        mode: ShflMode,
        d: Reg,
        dp: Pred,
        a: Reg,
        b: Reg,
        c: Reg,
        mask: Reg,
    },
    Match {
        any: bool,
        w: u8,
        d: Reg,
        dp: Pred,
        a: Reg,
        mask: Reg,
    },
    Redux {
        op: IBin,
        signed: bool,
        d: Reg,
        a: Reg,
        mask: Reg,
    },
    Activemask {
        d: Reg,
    },
    /// `%clock`/`%clock64`/`%globaltimer` and their halves (`crate::device`).
    Clock {
        d: Reg,
        timer: crate::device::Timer,
    },
    /// `vprintf(fmt, args)`: both are local-frame offsets of the call's `.param` slots.
    Printf {
        fmt: u32,
        args: u32,
        ret: u32,
    },
    /// An `mbarrier` operation on the object at `addr` (see `exec::asynch`): `d`
    /// receives the state token of an arrive (`NO_REG`: none), `a` is the count
    /// or transaction bytes (`NO_REG`: none).
    Mbar {
        op: MbarOp,
        space: Space,
        addr: Addr,
        d: Reg,
        a: Reg,
    },
    /// `mbarrier.test_wait` / `try_wait`: `p` is set where the phase of state
    /// token `a` (with `parity`, of phase parity `a`) has completed. A warp whose
    /// lanes are not all released lets the other warps run.
    MbarWait {
        p: Pred,
        space: Space,
        addr: Addr,
        a: Reg,
        parity: bool,
    },
    /// After a `cp.async`'s eager store: its `len` destination bytes count as
    /// not yet written (for the uninitialised-read check) until the thread waits
    /// for the copy's group.
    AsyncPending {
        space: Space,
        addr: Addr,
        len: u8,
    },
    /// `cp.async.commit_group`: the thread's pending copies become a group.
    AsyncCommit,
    /// `cp.async.wait_group n` (`wait_all`: a commit, then `n` 0): all but the
    /// `n` most recent groups of the thread are complete.
    AsyncWait {
        n: u32,
    },
    /// `cp.async.bulk` global → shared of `size` bytes (a register), completing
    /// `size` transaction bytes on the mbarrier at `mbar`. `tmp`: scratch slots.
    BulkCopy {
        dst: Addr,
        dspace: Space,
        src: Addr,
        sspace: Space,
        size: Reg,
        mbar: Addr,
        mspace: Space,
        tmp: [Reg; 4],
    },
    /// Integer add/sub/multiply-add with the carry flag (slot `cc`): `cin` adds
    /// (subtracts) it, `cout` sets it.
    Carry {
        op: CarryOp,
        w: u8,
        signed: bool,
        cin: bool,
        cout: bool,
        d: Reg,
        a: Reg,
        b: Reg,
        c: Reg,
        cc: Reg,
    },
    /// A call of a recursive function (`Kernel::sites`): pushes a frame per
    /// lane, copies the arguments, jumps to the function's entry.
    Call {
        site: u32,
    },
    /// The end of recursive function `func` (`Kernel::funcs`): copies the
    /// results to the call site, pops the frame, returns.
    Ret {
        func: u32,
    },
    Trap,
    Nop,
    /// `membar` / `fence`: orders memory for other blocks unless `.cta`
    /// (`__threadfence_block`); the global race detector's release.
    Fence {
        gpu: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CarryOp {
    Add,
    /// `d = a - b - CF`, CF = the borrow out.
    Sub,
    MadLo,
    MadHi,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MbarOp {
    Init,
    Inval,
    Arrive,
    /// An arrive that also lowers the expected count of later phases.
    ArriveDrop,
    ArriveExpectTx,
    ExpectTx,
    CompleteTx,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarRedMode {
    Popc,
    And,
    Or,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Instr {
    pub op: Op,
    pub guard: Guard,
}

/// Where an instruction came from.
#[derive(Debug, Clone)]
pub struct InstrInfo {
    pub ptx_line: u32,
    /// `(file index, line)` from the last `.loc`.
    pub src: Option<(u32, u32)>,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct ParamInfo {
    pub name: String,
    pub offset: u32,
    pub size: u32,
    pub ty: String,
}

/// A compiled `.entry`.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub name: String,
    pub code: Vec<Instr>,
    pub info: Vec<InstrInfo>,
    /// Number of register slots (not pre-multiplied).
    pub nslots: u32,
    pub npreds: u32,
    /// Slots holding immediates: filled once per warp.
    pub consts: Vec<(Reg, u64)>,
    pub specials: Vec<(Reg, Special)>,
    /// Predicates holding the constants false/true.
    pub pred_false: Pred,
    pub pred_true: Pred,
    pub params: Vec<ParamInfo>,
    pub param_bytes: u32,
    pub shared_static: u32,
    /// Where `extern .shared` (dynamic) memory starts.
    pub dyn_shared_offset: u32,
    /// The `__shared__` variables with their guard gaps; also the GPU's sizes.
    pub shared_layout: crate::shared_layout::SharedLayout,
    pub local_bytes: u32,
    pub files: HashMap<u32, String>,
    /// Jump tables of `brx.idx` (instruction indices).
    pub tables: Vec<Vec<u32>>,
    /// Per instruction, the sink of a load whose value some lanes throw away
    /// (`discard`): its shared read counts for the race check only there.
    pub deferred: Vec<Option<Sink>>,
    /// Recursive functions, compiled once after the kernel's body (`Op::Call`).
    pub funcs: Vec<Func>,
    pub sites: Vec<CallSite>,
}

/// Where a deferred load's read counts (`crate::discard`): the sink's index,
/// and for a `selp` which side carries the value (`Some(true)`: kept where the
/// predicate selects `a`; `None`: a guarded instruction, kept where its guard holds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sink {
    pub pc: u32,
    pub selp_a: Option<bool>,
}

/// A recursive function: where it starts and what one activation owns.
#[derive(Debug, Clone)]
pub struct Func {
    pub name: String,
    pub entry: u32,
    /// Its register slots and predicates, `[start, end)` (not pre-multiplied).
    pub slots: (u32, u32),
    pub preds: (u32, u32),
    /// Its byte ranges `(offset, len)` of the thread's local frame: parameters,
    /// results, then the variables of its body.
    pub local: Vec<(u32, u32)>,
    pub params: Vec<(u32, u32)>,
    pub rets: Vec<(u32, u32)>,
}

/// One call of a recursive function: local copies `(dst, src, len)` of the
/// arguments (caller's `.param` slots to the function's) and of the results
/// (the function's to the caller's).
#[derive(Debug, Clone)]
pub struct CallSite {
    pub func: u32,
    pub args: Vec<(u32, u32, u32)>,
    pub rets: Vec<(u32, u32, u32)>,
}

impl Kernel {
    pub fn source_of(&self, pc: usize) -> Option<String> {
        let (f, l) = self.info.get(pc)?.src?;
        let name = self.files.get(&f).map(|s| s.as_str()).unwrap_or("?");
        Some(format!("{name}:{l}"))
    }
    pub fn ptx_line(&self, pc: usize) -> usize {
        self.info.get(pc).map_or(0, |i| i.ptx_line as usize)
    }
}
