//! Mutant kernels that must fail every correctness check: written for one
//! part from its reference file's signatures and from the launches its checks
//! make (recorded on the simulator, [`super::recorder`]), so that each mutant
//! keeps the part's signature and touches exactly the elements of the output
//! buffers it is given, never one past them (a mutant that failed by writing
//! out of bounds would prove nothing).
//!
//! The kinds, after the ways benchmarks are known to be gamed: a kernel that
//! writes nothing, one that writes zeros, one that writes a constant, one that
//! copies an input into the output, and one that replays the outputs a
//! correct kernel produced for another seed.

use std::fmt::Write as _;

use kit::backend::Arg;

use super::recorder::Launch;

/// One parameter of a kernel, as the reference file declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    /// The element type of a pointer, or the type of a value (`const` dropped).
    pub ty: String,
    pub pointer: bool,
    pub constant: bool,
}

/// One kernel's signature.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    pub kernel: String,
    pub params: Vec<Param>,
}

impl Signature {
    /// The output: the first pointer that is not `const`. A kernel with more
    /// (ex11's `scan_sections(in, out, sums, n)`: each section's total for
    /// the next level) is mutated in its first; the checks read that one.
    pub fn output(&self) -> usize {
        let outs: Vec<usize> =
            (0..self.params.len()).filter(|&i| self.params[i].pointer && !self.params[i].constant).collect();
        assert!(!outs.is_empty(), "{}: expected a non-const pointer (the output)", self.kernel);
        outs[0]
    }
    pub fn inputs(&self) -> Vec<usize> {
        (0..self.params.len()).filter(|&i| self.params[i].pointer && self.params[i].constant).collect()
    }
    fn declaration(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| {
                let c = if p.constant { "const " } else { "" };
                if p.pointer {
                    format!("{c}{} *{}", p.ty, p.name)
                } else {
                    format!("{c}{} {}", p.ty, p.name)
                }
            })
            .collect();
        format!("extern \"C\" __global__ void {}({})", self.kernel, params.join(", "))
    }
}

/// The signature of `kernel` in `source` (a reference `.cu` file).
pub fn signature(source: &str, kernel: &str) -> Signature {
    let needle = format!("void {kernel}(");
    let at = source.find(&needle).unwrap_or_else(|| panic!("no `{needle}` in the reference file"));
    let rest = &source[at + needle.len()..];
    let list = &rest[..rest.find(')').expect("a closing parenthesis")];
    let params = list
        .split(',')
        .map(|p| {
            let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
            let pointer = p.contains('*');
            let p = p.replace('*', " * ");
            let mut words: Vec<&str> = p.split_whitespace().filter(|w| *w != "__restrict__").collect();
            let name = words.pop().expect("a parameter name").to_string();
            let constant = words.first() == Some(&"const");
            let ty = words.iter().filter(|w| !["const", "*"].contains(w)).copied().collect::<Vec<_>>().join(" ");
            Param { name, ty, pointer, constant }
        })
        .collect();
    Signature { kernel: kernel.into(), params }
}

/// The module-scope lines of a reference file a mutant must keep: `#define`s
/// and `#include`s, and the `__constant__` variables a check writes by name.
pub fn preamble(source: &str) -> String {
    source
        .lines()
        .filter(|l| {
            let l = l.trim_start();
            (l.starts_with("#define") || l.starts_with("#include") || l.starts_with("__constant__"))
                && !l.ends_with('\\')
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

/// What a mutant does to the output.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    Nothing,
    Zeros,
    Constant,
    /// Copies the input parameter of this index, converted to the output's type.
    Copy(usize),
    /// Writes the bytes a correct kernel left, launch by launch (seed `from`).
    Replay {
        from: u64,
    },
}

impl Kind {
    pub fn label(&self, sig: &Signature) -> String {
        match self {
            Kind::Nothing => "writes-nothing".into(),
            Kind::Zeros => "writes-zeros".into(),
            Kind::Constant => "writes-a-constant".into(),
            Kind::Copy(i) => format!("copies-{}", sig.params[*i].name),
            Kind::Replay { from } => format!("replays-seed-{from}"),
        }
    }
}

/// The launches of one key: its condition, the byte lengths of its arguments,
/// the blocks of its grid, and the outputs of its launches in order.
type Case = (String, Vec<usize>, u64, Vec<Option<Vec<u8>>>);

/// Replayed outputs larger than this are left out (the mutant's source would be huge).
pub const MAX_REPLAY_BYTES: usize = 16 << 10;

/// A condition that holds for launches like `l` (the same grid, block,
/// dynamic shared memory and value arguments): the key of a launch.
fn key(sig: &Signature, l: &Launch) -> String {
    let mut terms = vec![
        format!("gridDim.x == {}u && gridDim.y == {}u && gridDim.z == {}u", l.cfg.grid.0, l.cfg.grid.1, l.cfg.grid.2),
        format!(
            "blockDim.x == {}u && blockDim.y == {}u && blockDim.z == {}u",
            l.cfg.block.0, l.cfg.block.1, l.cfg.block.2
        ),
    ];
    for (p, a) in sig.params.iter().zip(&l.args) {
        let v = match a {
            Arg::Ptr(_) => continue,
            Arg::I32(v) => v.to_string(),
            Arg::U32(v) => format!("{v}u"),
            Arg::I64(v) => format!("{v}ll"),
            Arg::U64(v) => format!("{v}ull"),
            Arg::F32(v) => format!("{:?}f", v),
            Arg::F64(v) => format!("{:?}", v),
        };
        terms.push(format!("{} == {v}", p.name));
    }
    terms.join(" && ")
}

/// The mutant of `kind` for the kernels of one part, given the launches the
/// part's checks make (for [`Kind::Replay`], those made at the replayed seed,
/// with their outputs). A launch unlike any recorded one writes nothing.
pub fn source(preamble: &str, sigs: &[Signature], kind: &Kind, launches: &[Launch]) -> String {
    let mut src = format!("// mutant: {}\n{preamble}", kind.label(&sigs[0]));
    for (k, sig) in sigs.iter().enumerate() {
        let out = sig.output();
        let out_ty = &sig.params[out].ty;
        let out_name = &sig.params[out].name;
        // Per launch key (in the order first seen): the byte lengths of the
        // arguments (the shortest seen under that key), the blocks of the
        // grid, and, for a replay, the outputs of its launches in order.
        let mut cases: Vec<Case> = Vec::new();
        for l in launches.iter().filter(|l| l.kernel == sig.kernel) {
            let lens: Vec<usize> = l.bytes.iter().map(|b| b.unwrap_or(0)).collect();
            let k = key(sig, l);

            let at = match cases.iter().position(|c| c.0 == k) {
                Some(at) => at,
                None => {
                    let g = l.cfg.grid;
                    cases.push((k, lens.clone(), g.0 as u64 * g.1 as u64 * g.2 as u64, Vec::new()));
                    cases.len() - 1
                }
            };
            let case = &mut cases[at];
            for (e, n) in case.1.iter_mut().zip(&lens) {
                *e = (*e).min(*n);
            }
            case.3.push(l.output_after.clone());
        }
        let mut body = String::new();
        let mut tables = String::new();
        let copies_nothing = matches!(kind, Kind::Copy(i) if !sig.inputs().contains(i));
        match kind {
            _ if copies_nothing => {}
            Kind::Nothing => {}
            _ => {
                body += "    unsigned long long len = 0, in_len = 0;\n    const unsigned char *replay = 0;\n";
                body += "    (void)in_len; (void)replay;\n";
                body += "    unsigned long long threads = (unsigned long long)gridDim.x * gridDim.y * gridDim.z * \
                         blockDim.x * blockDim.y * blockDim.z;\n";
                body += "    unsigned long long block = blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + \
                         (unsigned long long)gridDim.y * blockIdx.z);\n";
                body += "    unsigned long long me = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * \
                         threadIdx.z) + block * blockDim.x * blockDim.y * blockDim.z;\n";
                body +=
                    "    bool first = threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;\n    (void)first;\n";
                if let Kind::Replay { .. } = kind {
                    body += "    __shared__ unsigned int nth_s;\n";
                }
                for (c, (cond, lens, blocks, outputs)) in cases.iter().enumerate() {
                    let in_len = match kind {
                        Kind::Copy(i) => lens[*i] / elem_bytes(&sig.params[*i].ty),
                        _ => 0,
                    };
                    let mut set = format!("len = {}ull; in_len = {in_len}ull;", lens[out]);
                    if let Kind::Replay { .. } = kind {
                        // Each block counts the launches of this key it took
                        // part in: the n-th launch replays the n-th output.
                        let seen = format!("seen_{k}_{c}");
                        let _ = writeln!(tables, "__device__ unsigned int {seen}[{blocks}];");
                        set = format!(
                            "if (first) nth_s = {seen}[block]; __syncthreads(); unsigned int nth = nth_s; \
                             if (first) {seen}[block] = nth + 1; len = 0;"
                        );
                        for (j, output) in outputs.iter().enumerate() {
                            // Too large to replay: that launch writes nothing.
                            let Some(bytes) = output.as_ref().filter(|b| b.len() <= MAX_REPLAY_BYTES) else { continue };
                            let name = format!("replay_{k}_{c}_{j}");
                            let _ =
                                write!(tables, "__device__ const unsigned char {name}[{}] = {{", bytes.len().max(1));
                            for (i, b) in bytes.iter().enumerate() {
                                if i % 32 == 0 {
                                    tables += "\n    ";
                                }
                                let _ = write!(tables, "{b},");
                            }
                            tables += "\n};\n";
                            let _ = write!(set, " if (nth == {j}) {{ len = {}ull; replay = {name}; }}", bytes.len());
                        }
                    }
                    let _ = writeln!(body, "    {}if ({cond}) {{ {set} }}", if c > 0 { "else " } else { "" });
                }
                let elems = format!("len / sizeof({out_ty})");
                let write = match kind {
                    Kind::Zeros => format!("    for (unsigned long long i = me; i < {elems}; i += threads) {out_name}[i] = ({out_ty})0;\n"),
                    Kind::Constant => format!("    for (unsigned long long i = me; i < {elems}; i += threads) {out_name}[i] = ({out_ty})1;\n"),
                    Kind::Copy(i) => {
                        let input = &sig.params[*i].name;
                        format!(
                            "    for (unsigned long long i = me; i < {elems} && i < in_len; i += threads) {out_name}[i] = ({out_ty}){input}[i];\n"
                        )
                    }
                    Kind::Replay { .. } => format!(
                        "    for (unsigned long long i = me; replay && i < len; i += threads) ((unsigned char *){out_name})[i] = replay[i];\n"
                    ),
                    Kind::Nothing => unreachable!(),
                };
                body += &write;
            }
        }
        // Values the body does not use: keep the compiler quiet.
        let unused: String = sig.params.iter().map(|p| format!("(void){};", p.name)).collect();
        let _ = write!(src, "{tables}{} {{\n    {unused}\n{body}}}\n", sig.declaration());
    }
    src
}

/// Bytes of one element of a C type the exercises use.
pub fn elem_bytes(ty: &str) -> usize {
    match ty {
        "char" | "unsigned char" | "signed char" | "bool" | "uint8_t" | "int8_t" => 1,
        "short" | "unsigned short" | "__half" => 2,
        "double" | "long long" | "unsigned long long" | "long" | "unsigned long" | "size_t" => 8,
        _ => 4,
    }
}

/// Every mutant kind for a part whose kernels are `sigs`: the copies are of
/// each input of the first kernel (all of a part's kernels take the same inputs).
pub fn kinds(sigs: &[Signature], replay_from: u64) -> Vec<Kind> {
    let mut kinds = vec![Kind::Nothing, Kind::Zeros, Kind::Constant];
    kinds.extend(sigs[0].inputs().into_iter().map(Kind::Copy));
    kinds.push(Kind::Replay { from: replay_from });
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_read_from_the_reference() {
        let s = signature(
            "extern \"C\" __global__ void dot(const float *a, const float* __restrict__ b, int n, float *partial)\n{",
            "dot",
        );
        assert_eq!(s.params.len(), 4);
        assert_eq!(s.params[1], Param { name: "b".into(), ty: "float".into(), pointer: true, constant: true });
        assert_eq!(s.params[2], Param { name: "n".into(), ty: "int".into(), pointer: false, constant: false });
        assert_eq!(s.output(), 3);
        assert_eq!(s.inputs(), vec![0, 1]);
        let s = signature("void search_v1(const unsigned char *dna, int n)", "search_v1");
        assert_eq!(s.params[0].ty, "unsigned char");
    }
}
