//! Hand-written PTX for single instructions and error paths (no NVRTC needed).

use ptx_sim::{ParamValue, SimConfig, SimError, Simulator};

/// Wraps `body` in a kernel `t(out, in)`: each thread reads 4 words of `in` into
/// %r2..%r5 (and as floats into %f2..%f5) and writes up to 16 words at `out + tid*64`
/// via `%rd4`.
fn kernel(body: &str) -> String {
    format!(
        r#"
.version 7.0
.target sm_75
.address_size 64

.visible .entry t(
    .param .u64 t_out,
    .param .u64 t_in
)
{{
    .reg .pred %p<16>;
    .reg .b16 %rs<16>;
    .reg .b32 %r<64>;
    .reg .f32 %f<32>;
    .reg .b64 %rd<32>;
    .reg .f64 %fd<16>;

    ld.param.u64 %rd1, [t_out];
    ld.param.u64 %rd2, [t_in];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd2, %rd2;
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 64;
    add.s64 %rd4, %rd1, %rd3;
    add.s64 %rd5, %rd2, %rd3;
    ld.global.u32 %r2, [%rd5];
    ld.global.u32 %r3, [%rd5+4];
    ld.global.u32 %r4, [%rd5+8];
    ld.global.u32 %r5, [%rd5+12];
    mov.b32 %f2, %r2;
    mov.b32 %f3, %r3;
    mov.b32 %f4, %r4;
    mov.b32 %f5, %r5;
{body}
    ret;
}}
"#
    )
}

/// Runs `body` for `inputs.len()` threads (one block); returns 16 words per thread.
fn run(body: &str, inputs: &[[u32; 4]]) -> Vec<[u32; 16]> {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(&kernel(body)).unwrap_or_else(|e| panic!("{e}"));
    let n = inputs.len();
    let pin = sim.alloc(n * 64).unwrap();
    let mut bytes = vec![0u8; n * 64];
    for (t, w) in inputs.iter().enumerate() {
        for (j, x) in w.iter().enumerate() {
            bytes[t * 64 + j * 4..t * 64 + j * 4 + 4].copy_from_slice(&x.to_le_bytes());
        }
    }
    sim.write(pin, &bytes).unwrap();
    let pout = sim.alloc(n * 64).unwrap();
    sim.launch(m, "t", (1, 1, 1), (n as u32, 1, 1), 0, &[ParamValue::U64(pout), ParamValue::U64(pin)])
        .unwrap_or_else(|e| panic!("{e}"));
    let mut out = vec![0u8; n * 64];
    sim.read(pout, &mut out).unwrap();
    (0..n)
        .map(|t| std::array::from_fn(|j| u32::from_le_bytes(out[t * 64 + j * 4..][..4].try_into().unwrap())))
        .collect()
}

fn st(j: usize, reg: &str) -> String {
    format!("    st.global.u32 [%rd4+{}], {reg};\n", j * 4)
}

fn bfe_ref(a: u32, pos: u32, len: u32, signed: bool) -> u32 {
    let (pos, len) = (pos & 0xff, len & 0xff);
    // PTX ISA: sbit = (unsigned || len == 0) ? 0 : a[min(pos + len - 1, msb)]
    let sbit = signed && len > 0 && (a >> (pos + len - 1).min(31)) & 1 == 1;
    let mut d = 0u32;
    for i in 0..32 {
        let bit = if i < len && pos + i <= 31 { (a >> (pos + i)) & 1 == 1 } else { sbit };
        d |= (bit as u32) << i;
    }
    d
}

#[test]
fn bit_field_and_permute() {
    let body = [
        "    bfe.u32 %r10, %r2, %r3, %r4;",
        &st(0, "%r10"),
        "    bfe.s32 %r11, %r2, %r3, %r4;",
        &st(1, "%r11"),
        "    bfi.b32 %r12, %r5, %r2, %r3, %r4;",
        &st(2, "%r12"),
        "    prmt.b32 %r13, %r2, %r5, %r3;",
        &st(3, "%r13"),
        "    shf.l.wrap.b32 %r14, %r2, %r5, %r3;",
        &st(4, "%r14"),
        "    shf.r.clamp.b32 %r15, %r2, %r5, %r3;",
        &st(5, "%r15"),
        "    lop3.b32 %r16, %r2, %r3, %r5, 0x96;",
        &st(6, "%r16"),
        "    bfind.u32 %r17, %r2;",
        &st(7, "%r17"),
        "    bfind.shiftamt.s32 %r18, %r5;",
        &st(8, "%r18"),
        "    mul24.lo.s32 %r19, %r2, %r5;",
        &st(9, "%r19"),
        "    mul24.hi.u32 %r20, %r2, %r5;",
        &st(10, "%r20"),
        "    cnot.b32 %r21, %r4;",
        &st(11, "%r21"),
        "    mad.hi.u32 %r22, %r2, %r5, %r3;",
        &st(12, "%r22"),
        "    mul.hi.s32 %r23, %r2, %r5;",
        &st(13, "%r23"),
        "    min.u32 %r24, %r2, %r5;",
        &st(14, "%r24"),
        "    max.s32 %r25, %r2, %r5;",
        &st(15, "%r25"),
    ]
    .join("\n");
    let mut inputs = Vec::new();
    let mut x = 0x1234_5678u32;
    for t in 0..64u32 {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let a = x;
        let pos = (t * 7) % 40;
        let len = (t * 5) % 36;
        let b = x.rotate_left(13) ^ 0xdead_beef;
        inputs.push([a, pos, if t == 3 { 0 } else { len }, b]);
    }
    let out = run(&body, &inputs);
    for (t, (i, o)) in inputs.iter().zip(&out).enumerate() {
        let [a, pos, len, b] = *i;
        let prmt = {
            let bytes = ((b as u64) << 32) | a as u64;
            let mut d = 0u32;
            for k in 0..4 {
                let s = (pos >> (4 * k)) & 0xf;
                let mut byte = ((bytes >> (8 * (s & 7))) & 0xff) as u32;
                if s & 8 != 0 {
                    byte = if byte & 0x80 != 0 { 0xff } else { 0 };
                }
                d |= byte << (8 * k);
            }
            d
        };
        let n = pos & 31;
        let v = ((b as u64) << 32) | a as u64;
        let shf_l = ((v << n) >> 32) as u32;
        let shf_r = (v >> pos.min(32)) as u32;
        let lop = a ^ pos ^ b; // 0x96 = three-way xor
        let bfind_u = if a == 0 { u32::MAX } else { 31 - a.leading_zeros() };
        let bfind_s = {
            let v = if (b as i32) < 0 { !b } else { b };
            if v == 0 {
                u32::MAX
            } else {
                v.leading_zeros()
            }
        };
        let s24 = |x: u32| ((x << 8) as i32 >> 8) as i64;
        let want = [
            bfe_ref(a, pos, len, false),
            bfe_ref(a, pos, len, true),
            bfi_fix(b, a, pos, len),
            prmt,
            shf_l,
            shf_r,
            lop,
            bfind_u,
            bfind_s,
            (s24(a) * s24(b)) as u32,
            (((a & 0xff_ffff) as u64 * (b & 0xff_ffff) as u64) >> 16) as u32,
            (len == 0) as u32,
            ((((a as u64) * (b as u64)) >> 32) as u32).wrapping_add(pos),
            (((a as i32 as i64) * (b as i32 as i64)) >> 32) as u32,
            a.min(b),
            (a as i32).max(b as i32) as u32,
        ];
        for j in 0..16 {
            assert_eq!(o[j], want[j], "thread {t} op {j}: inputs {i:x?}");
        }
    }
}

/// `bfi.b32 d, f, b, pos, len`: insert the low `len` bits of `f` into `b` at `pos`.
fn bfi_fix(f: u32, b: u32, pos: u32, len: u32) -> u32 {
    let (pos, len) = (pos & 0xff, len & 0xff);
    let mut d = b;
    for k in 0..len {
        if pos + k <= 31 {
            d = (d & !(1 << (pos + k))) | (((f >> k) & 1) << (pos + k));
        }
    }
    d
}

#[test]
fn float_compares_set_and_slct() {
    let cmps = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"];
    let mut body = String::new();
    for (j, c) in cmps.iter().enumerate() {
        body += &format!(
            "    setp.{c}.f32 %p{}, %f2, %f3;\n    selp.u32 %r{}, 1, 0, %p{};\n",
            j % 8 + 1,
            10 + j,
            j % 8 + 1
        );
        body += &st(j, &format!("%r{}", 10 + j));
    }
    // set.lt.f32.f32 gives 1.0f; slct picks by the sign of the third operand
    body += "    set.lt.f32.f32 %f10, %f2, %f3;\n";
    body += &st(14, "%f10");
    body += "    slct.u32.s32 %r30, %r2, %r3, %r4;\n";
    body += &st(15, "%r30");
    let vals = [0.0f32, -0.0, 1.0, -2.5, f32::NAN, f32::INFINITY];
    let mut inputs = Vec::new();
    for &a in &vals {
        for &b in &vals {
            inputs.push([a.to_bits(), b.to_bits(), if inputs.len() % 3 == 0 { (-1i32) as u32 } else { 5 }, 0]);
        }
    }
    let out = run(&body, &inputs);
    for (i, o) in inputs.iter().zip(&out) {
        let (a, b) = (f32::from_bits(i[0]), f32::from_bits(i[1]));
        let un = a.is_nan() || b.is_nan();
        let want = [
            a == b,
            !un && a != b,
            a < b,
            a <= b,
            a > b,
            a >= b,
            un || a == b,
            a != b,
            un || a < b,
            un || a <= b,
            un || a > b,
            un || a >= b,
            !un,
            un,
        ];
        for (j, w) in want.iter().enumerate() {
            assert_eq!(o[j], *w as u32, "{} on {a} {b}", cmps[j]);
        }
        assert_eq!(f32::from_bits(o[14]), if a < b { 1.0 } else { 0.0 });
        assert_eq!(o[15], if (i[2] as i32) >= 0 { i[0] } else { i[1] });
    }
}

#[test]
fn predicate_logic_and_pairs() {
    let body = "
    setp.lt.s32 %p1|%p2, %r2, %r3;
    selp.u32 %r10, 1, 0, %p1;
    selp.u32 %r11, 1, 0, %p2;
    setp.gt.and.s32 %p3, %r2, 0, %p1;
    selp.u32 %r12, 1, 0, %p3;
    setp.gt.or.s32 %p4, %r2, 0, !%p1;
    selp.u32 %r13, 1, 0, %p4;
    xor.pred %p5, %p3, %p4;
    not.pred %p6, %p5;
    selp.u32 %r14, 1, 0, %p6;
    @%p1 mov.u32 %r15, 111;
    @!%p1 mov.u32 %r15, 222;
    set.ne.and.u32.s32 %r16, %r2, %r3, %p1;
    st.global.u32 [%rd4], %r10;
    st.global.u32 [%rd4+4], %r11;
    st.global.u32 [%rd4+8], %r12;
    st.global.u32 [%rd4+12], %r13;
    st.global.u32 [%rd4+16], %r14;
    st.global.u32 [%rd4+20], %r15;
    st.global.u32 [%rd4+24], %r16;
";
    let inputs: Vec<[u32; 4]> =
        [(-3, 4), (5, 2), (0, 0), (7, 9)].iter().map(|&(a, b): &(i32, i32)| [a as u32, b as u32, 0, 0]).collect();
    let out = run(body, &inputs);
    for (i, o) in inputs.iter().zip(&out) {
        let (a, b) = (i[0] as i32, i[1] as i32);
        let p1 = a < b;
        let p3 = a > 0 && p1;
        let p4 = a > 0 || !p1;
        let want = [
            p1 as u32,
            !p1 as u32,
            p3 as u32,
            p4 as u32,
            !(p3 ^ p4) as u32,
            if p1 { 111 } else { 222 },
            if a != b && p1 { u32::MAX } else { 0 },
        ];
        assert_eq!(&o[..7], &want, "a={a} b={b}");
    }
}

#[test]
fn conversions_and_rounding() {
    let body = "
    cvt.rni.s32.f32 %r10, %f2;
    cvt.rmi.s32.f32 %r11, %f2;
    cvt.rpi.s32.f32 %r12, %f2;
    cvt.rzi.u32.f32 %r13, %f2;
    cvt.rn.f32.s32 %f14, %r3;
    cvt.rz.f32.s32 %f15, %r3;
    cvt.rp.f32.u32 %f16, %r3;
    cvt.f64.f32 %fd1, %f2;
    mul.f64 %fd2, %fd1, 0d3FB999999999999A;
    cvt.rn.f32.f64 %f17, %fd2;
    cvt.rz.f32.f64 %f18, %fd2;
    cvt.rn.f16.f32 %rs1, %f2;
    cvt.f32.f16 %f19, %rs1;
    cvt.sat.u8.s32 %r14, %r3;
    cvt.s8.s32 %r15, %r3;
    cvt.s32.s8 %r16, %r15;
    cvt.sat.f32.f32 %f20, %f2;
    cvt.u16.u32 %rs2, %r3;
    cvt.u32.u16 %r17, %rs2;
    st.global.u32 [%rd4], %r10;
    st.global.u32 [%rd4+4], %r11;
    st.global.u32 [%rd4+8], %r12;
    st.global.u32 [%rd4+12], %r13;
    st.global.f32 [%rd4+16], %f14;
    st.global.f32 [%rd4+20], %f15;
    st.global.f32 [%rd4+24], %f16;
    st.global.f32 [%rd4+28], %f17;
    st.global.f32 [%rd4+32], %f18;
    st.global.f32 [%rd4+36], %f19;
    st.global.u32 [%rd4+40], %r14;
    st.global.u32 [%rd4+44], %r16;
    st.global.f32 [%rd4+48], %f20;
    st.global.u32 [%rd4+52], %r17;
";
    let cases: [(f32, i32); 6] =
        [(2.5, 16_777_217), (-2.5, -16_777_219), (3.7, 300), (-0.2, -5), (1e10, 2_147_483_647), (0.75, 70_000)];
    let inputs: Vec<[u32; 4]> = cases.iter().map(|&(f, i)| [f.to_bits(), i as u32, 0, 0]).collect();
    let out = run(body, &inputs);
    let up = |f: f32| f32::from_bits(if f >= 0.0 { f.to_bits() + 1 } else { f.to_bits() - 1 });
    for ((f, i), o) in cases.iter().zip(&out) {
        let (f, i) = (*f, *i);
        let rn = i as f32;
        // toward zero: one step down in magnitude (bits - 1 for either sign)
        let rz = if (rn as f64).abs() > (i as f64).abs() { f32::from_bits(rn.to_bits() - 1) } else { rn };
        let ru = i as u32;
        let rp = {
            let r = ru as f32;
            if (r as f64) < ru as f64 {
                up(r)
            } else {
                r
            }
        };
        let d = f as f64 * 0.1;
        let drz = {
            let r = d as f32;
            if (r as f64).abs() > d.abs() {
                f32::from_bits(r.to_bits() - 1)
            } else {
                r
            }
        };
        let half = {
            // round-trip through binary16 (values here are in its normal range or overflow)
            let h = if f.abs() >= 65520.0 { f32::INFINITY.copysign(f) } else { f };
            if h.is_infinite() {
                h
            } else {
                let e = h.abs().log2().floor() as i32;
                let q = 2f32.powi(e - 10);
                (h / q).round_ties_even() * q
            }
        };
        let want_i =
            [f.round_ties_even() as i32 as u32, f.floor() as i32 as u32, f.ceil() as i32 as u32, f.trunc() as u32];
        assert_eq!(&o[..4], &want_i, "f={f}");
        assert_eq!(f32::from_bits(o[4]), rn, "i={i}");
        assert_eq!(f32::from_bits(o[5]), rz, "rz i={i}");
        assert_eq!(f32::from_bits(o[6]), rp, "rp u={ru}");
        assert_eq!(f32::from_bits(o[7]), d as f32);
        assert_eq!(f32::from_bits(o[8]), drz);
        assert_eq!(f32::from_bits(o[9]), half, "f16 of {f}");
        assert_eq!(o[10], i.clamp(0, 255) as u32);
        assert_eq!(o[11], i as i8 as i32 as u32);
        assert_eq!(f32::from_bits(o[12]), f.clamp(0.0, 1.0));
        assert_eq!(o[13], i as u32 & 0xffff);
    }
}

#[test]
fn float_special_functions_and_testp() {
    let body = "
    sqrt.rn.f32 %f10, %f2;
    rcp.rn.f32 %f11, %f2;
    rsqrt.approx.f32 %f12, %f2;
    ex2.approx.ftz.f32 %f13, %f3;
    lg2.approx.f32 %f14, %f2;
    sin.approx.f32 %f15, %f3;
    cos.approx.f32 %f16, %f3;
    testp.finite.f32 %p1, %f4;
    selp.u32 %r10, 1, 0, %p1;
    testp.notanumber.f32 %p2, %f4;
    selp.u32 %r11, 1, 0, %p2;
    copysign.f32 %f17, %f3, %f2;
    div.rn.f32 %f18, %f2, %f3;
    div.full.f32 %f19, %f2, %f3;
    add.sat.f32 %f20, %f2, %f3;
    st.global.f32 [%rd4], %f10;
    st.global.f32 [%rd4+4], %f11;
    st.global.f32 [%rd4+8], %f12;
    st.global.f32 [%rd4+12], %f13;
    st.global.f32 [%rd4+16], %f14;
    st.global.f32 [%rd4+20], %f15;
    st.global.f32 [%rd4+24], %f16;
    st.global.u32 [%rd4+28], %r10;
    st.global.u32 [%rd4+32], %r11;
    st.global.f32 [%rd4+36], %f17;
    st.global.f32 [%rd4+40], %f18;
    st.global.f32 [%rd4+44], %f19;
    st.global.f32 [%rd4+48], %f20;
";
    let cases = [(2.0f32, 0.5f32, 1.0f32), (9.0, -1.25, f32::NAN), (0.3, 3.0, f32::INFINITY)];
    let inputs: Vec<[u32; 4]> = cases.iter().map(|&(a, b, c)| [a.to_bits(), b.to_bits(), c.to_bits(), 0]).collect();
    let out = run(body, &inputs);
    for ((a, b, c), o) in cases.iter().zip(&out) {
        let f = |j: usize| f32::from_bits(o[j]);
        assert_eq!(f(0), a.sqrt());
        assert_eq!(f(1), 1.0 / a);
        assert!((f(2) - 1.0 / a.sqrt()).abs() < 1e-6);
        assert!((f(3) - b.exp2()).abs() < 1e-5);
        assert!((f(4) - a.log2()).abs() < 1e-5);
        assert!((f(5) - b.sin()).abs() < 1e-5);
        assert!((f(6) - b.cos()).abs() < 1e-5);
        assert_eq!(o[7], c.is_finite() as u32);
        assert_eq!(o[8], c.is_nan() as u32);
        assert_eq!(f(9), a.copysign(*b));
        assert_eq!(f(10), a / b);
        assert_eq!(f(11), a / b);
        assert_eq!(f(12), (a + b).clamp(0.0, 1.0));
    }
}

#[test]
fn vector_loads_packs_and_local_memory() {
    let body = "
    .local .align 16 .b8 depot[32];
    ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd5];
    mov.b64 %rd10, {%r10, %r11};
    mov.b64 {%r14, %r15}, %rd10;
    mov.u64 %rd11, depot;
    st.local.v2.u32 [%rd11+8], {%r13, %r12};
    ld.local.u32 %r16, [%rd11+12];
    cvta.local.u64 %rd12, %rd11;
    ld.u32 %r17, [%rd12+8];
    st.global.v4.u32 [%rd4], {%r13, %r12, %r11, %r10};
    st.global.v2.u32 [%rd4+16], {%r15, %r14};
    st.global.u32 [%rd4+24], %r16;
    st.global.u32 [%rd4+28], %r17;
    st.global.u64 [%rd4+32], %rd10;
    ld.global.s8 %r18, [%rd5+3];
    ld.global.u16 %r19, [%rd5+2];
    st.global.u32 [%rd4+40], %r18;
    st.global.u32 [%rd4+44], %r19;
    st.global.u8 [%rd4+48], %r2;
    st.global.b16 [%rd4+50], %r3;
";
    let inputs = vec![[0x8011_2233u32, 2, 3, 4], [5, 0xfff6_0007, 7, 8]];
    let out = run(body, &inputs);
    for (i, o) in inputs.iter().zip(&out) {
        assert_eq!(&o[..4], &[i[3], i[2], i[1], i[0]]);
        assert_eq!(&o[4..6], &[i[1], i[0]]);
        assert_eq!(o[6], i[2]);
        assert_eq!(o[7], i[3]);
        assert_eq!(o[8] as u64 | (o[9] as u64) << 32, i[0] as u64 | (i[1] as u64) << 32);
        assert_eq!(o[10], (i[0] >> 24) as u8 as i8 as i32 as u32);
        assert_eq!(o[11], i[0] >> 16);
        assert_eq!(o[12], (i[0] & 0xff) | (i[1] & 0xffff) << 16);
    }
}

#[test]
fn divergent_branches_reconverge_for_shuffles() {
    // lanes take different paths, then all meet at a full-warp shuffle
    let body = "
    and.b32 %r10, %r1, 3;
    mov.u32 %r11, 0;
    setp.eq.s32 %p1, %r10, 0;
    @%p1 bra $L_zero;
    setp.eq.s32 %p2, %r10, 1;
    @%p2 bra $L_one;
    mov.u32 %r11, 30;
    bra.uni $L_join;
$L_one:
    mov.u32 %r11, 10;
    bra.uni $L_join;
$L_zero:
    mov.u32 %r12, 0;
$L_loop:
    add.s32 %r11, %r11, 1;
    add.s32 %r12, %r12, 1;
    setp.lt.u32 %p3, %r12, %r1;
    @%p3 bra $L_loop;
$L_join:
    shfl.sync.bfly.b32 %r13, %r11, 1, 31, -1;
    add.s32 %r14, %r11, %r13;
    vote.sync.ballot.b32 %r15, %p1, -1;
    st.global.u32 [%rd4], %r11;
    st.global.u32 [%rd4+4], %r14;
    st.global.u32 [%rd4+8], %r15;
";
    let inputs = vec![[0u32; 4]; 32];
    let out = run(body, &inputs);
    let val = |t: u32| match t & 3 {
        0 => t.max(1),
        1 => 10,
        _ => 30,
    };
    for t in 0..32u32 {
        let o = &out[t as usize];
        assert_eq!(o[0], val(t), "lane {t}");
        assert_eq!(o[1], val(t) + val(t ^ 1), "lane {t}");
        assert_eq!(o[2], 0x1111_1111);
    }
}

#[test]
fn each_lane_votes_matches_and_reduces_within_its_own_membermask() {
    // tiled_partition<16>: the two halves of one warp name their own masks
    // and run the warp-synchronous instruction together, yet apart.
    let body = "
    shr.u32 %r10, %r1, 4;
    shl.b32 %r11, %r10, 4;
    mov.u32 %r12, 65535;
    shl.b32 %r12, %r12, %r11;
    setp.ne.u32 %p1, %r2, 0;
    vote.sync.ballot.b32 %r13, %p1, %r12;
    vote.sync.any.pred %p2, %p1, %r12;
    selp.u32 %r14, 1, 0, %p2;
    vote.sync.all.pred %p3, %p1, %r12;
    selp.u32 %r15, 1, 0, %p3;
    redux.sync.min.s32 %r16, %r2, %r12;
    redux.sync.add.s32 %r17, %r2, %r12;
    match.any.sync.b32 %r18, %r3, %r12;
";
    let body = format!("{body}{}", (0..6).map(|j| st(j, &format!("%r{}", 13 + j))).collect::<String>());
    // Half 0: only lane 3 is non-zero; half 1: all non-zero, lane 20 negative.
    let a = |t: u32| match t {
        3 => 7,
        20 => -5i32 as u32,
        16.. => t,
        _ => 0,
    };
    let inputs: Vec<[u32; 4]> = (0..32).map(|t| [a(t), t % 3, 0, 0]).collect();
    let out = run(&body, &inputs);
    for t in 0..32u32 {
        let half: Vec<u32> = (t & 16..(t & 16) + 16).collect();
        let ballot = half.iter().filter(|&&j| a(j) != 0).fold(0, |m, j| m | 1 << j);
        let min = half.iter().map(|&j| a(j) as i32).min().unwrap() as u32;
        let sum = half.iter().fold(0u32, |s, &j| s.wrapping_add(a(j)));
        let same = half.iter().filter(|&&j| j % 3 == t % 3).fold(0, |m, j| m | 1 << j);
        let all = half.iter().all(|&j| a(j) != 0) as u32;
        assert_eq!(out[t as usize][..6], [ballot, 1, all, min, sum, same], "lane {t}");
    }
}

fn load_err(ptx: &str) -> SimError {
    Simulator::new(SimConfig::default()).load_module(ptx).unwrap_err()
}

#[test]
fn unsupported_instructions_are_named() {
    match load_err(&kernel("    vadd.s32.s32.s32.sat %r10, %r2, %r3, %r4;")) {
        SimError::Unsupported { instruction, line } => {
            assert!(instruction.contains("vadd.s32.s32.s32"), "{instruction}");
            assert!(line > 30);
        }
        e => panic!("{e}"),
    }
    match load_err(&kernel("    frobnicate.b32 %r10, %r2;")) {
        SimError::Unsupported { instruction, .. } => assert_eq!(instruction, "frobnicate.b32"),
        e => panic!("{e}"),
    }
    match load_err(&kernel("    add.s32 %r10, %r2;")) {
        SimError::Parse { .. } => {}
        e => panic!("{e}"),
    }
    match load_err(&kernel("    bra $nowhere;")) {
        SimError::Parse { msg, .. } => assert!(msg.contains("nowhere"), "{msg}"),
        e => panic!("{e}"),
    }
    match load_err(&kernel("    add.s32 %r10, %r2, %q3;")) {
        SimError::Unsupported { instruction, .. } => assert!(instruction.contains("%q3")),
        e => panic!("{e}"),
    }
}

#[test]
fn memory_faults() {
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim
        .load_module(&kernel(
            "    setp.eq.s32 %p1, %r2, 1;\n    @%p1 st.global.u32 [%rd4+2], %r2;\n    setp.eq.s32 %p2, %r2, 2;\n    mov.u64 %rd9, 0;\n    @%p2 ld.global.u32 %r9, [%rd9];\n    setp.eq.s32 %p3, %r2, 3;\n    @%p3 ld.shared.u32 %r9, [%rd9];\n",
        ))
        .unwrap();
    let pin = sim.alloc(64).unwrap();
    let pout = sim.alloc(64).unwrap();
    let args = [ParamValue::U64(pout), ParamValue::U64(pin)];
    for (mode, check) in [(0u32, "ok"), (1, "misaligned"), (2, "null"), (3, "shared")] {
        sim.write(pin, &mode.to_le_bytes()).unwrap();
        let r = sim.launch(m, "t", (1, 1, 1), (1, 1, 1), 0, &args);
        match (check, r) {
            ("ok", Ok(_)) => {}
            ("misaligned", Err(SimError::MisalignedAddress { addr, size: 4, .. })) => assert_eq!(addr, pout + 2),
            ("null", Err(SimError::IllegalAddress { addr: 0, ref space, .. })) => assert_eq!(space, "global"),
            ("shared", Err(SimError::IllegalAddress { addr: 0, ref space, .. })) => assert_eq!(space, "shared"),
            (c, r) => panic!("{c}: {r:?}"),
        }
    }
    // host accesses are bounds-checked too
    assert!(matches!(sim.write(pin + 60, &[0; 8]), Err(SimError::HostAccess { .. })));
    let mut b = [0u8; 4];
    assert!(sim.read(12345, &mut b).is_err());
}

#[test]
fn module_variables_with_initializers() {
    let ptx = r#"
.version 7.0
.target sm_75
.address_size 64
.const .align 4 .b8 table[12] = {1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0};
.const .align 4 .f32 scale = 0f40000000;
.global .align 4 .u32 counter = 7;
.global .align 8 .u64 where_table = generic(table);

.visible .entry t(.param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    ld.const.u32 %r1, [table+8];
    ld.const.f32 %f1, [scale];
    cvt.rn.f32.u32 %f2, %r1;
    mul.f32 %f3, %f2, %f1;
    st.global.f32 [%rd1], %f3;
    atom.global.add.u32 %r2, [counter], 1;
    st.global.u32 [%rd1+4], %r2;
    mov.u64 %rd2, table;
    ld.global.u64 %rd3, [where_table];
    sub.s64 %rd4, %rd3, %rd2;
    st.global.u64 [%rd1+8], %rd4;
    red.global.add.u32 [counter], 10;
    ret;
}
"#;
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(ptx).unwrap();
    let out = sim.alloc(16).unwrap();
    sim.launch(m, "t", (1, 1, 1), (1, 1, 1), 0, &[ParamValue::U64(out)]).unwrap();
    let mut b = [0u8; 16];
    sim.read(out, &mut b).unwrap();
    assert_eq!(f32::from_le_bytes(b[..4].try_into().unwrap()), 6.0);
    assert_eq!(u32::from_le_bytes(b[4..8].try_into().unwrap()), 7);
    assert_eq!(u64::from_le_bytes(b[8..].try_into().unwrap()), 0);
    let mut c = [0u8; 4];
    sim.read_symbol(m, "counter", &mut c).unwrap();
    assert_eq!(u32::from_le_bytes(c), 18);
    sim.write_symbol(m, "table", &[9, 0, 0, 0]).unwrap();
    assert!(matches!(sim.write_symbol(m, "scale", &[0; 8]), Err(SimError::BadParams(_))));
}

#[test]
fn module_shared_variables_count_only_where_used() {
    // two kernels, each with its own 40 KiB module-scope array: each fits in 48 KiB
    let ptx = r#"
.version 7.0
.target sm_75
.address_size 64
.shared .align 4 .b8 big_a[40960];
.shared .align 4 .b8 big_b[40960];

.func (.param .b32 ret) peek(.param .b32 i)
{
    .reg .b32 %r<4>;
    ld.param.b32 %r1, [i];
    shl.b32 %r2, %r1, 2;
    ld.shared.u32 %r3, [big_b+4];
    st.param.b32 [ret], %r3;
    ret;
}

.visible .entry ka(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, 5;
    st.shared.u32 [big_a+40956], %r1;
    ld.shared.u32 %r2, [big_a+40956];
    st.global.u32 [%rd1], %r2;
    ret;
}

.visible .entry kb(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, 9;
    st.shared.u32 [big_b+4], %r1;
    {
    .param .b32 p0;
    st.param.b32 [p0], %r1;
    .param .b32 r0;
    call.uni (r0), peek, (p0);
    ld.param.b32 %r2, [r0];
    }
    st.global.u32 [%rd1], %r2;
    ret;
}
"#;
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(ptx).unwrap();
    let out = sim.alloc(4).unwrap();
    for (k, want) in [("ka", 5u32), ("kb", 9)] {
        sim.launch(m, k, (1, 1, 1), (1, 1, 1), 0, &[ParamValue::U64(out)]).unwrap_or_else(|e| panic!("{k}: {e}"));
        let mut b = [0u8; 4];
        sim.read(out, &mut b).unwrap();
        assert_eq!(u32::from_le_bytes(b), want, "{k}");
    }
    // with 16 KiB of dynamic memory on top, the limit is exceeded
    let err = sim.launch(m, "ka", (1, 1, 1), (1, 1, 1), 16384, &[ParamValue::U64(out)]).unwrap_err();
    assert!(matches!(err, SimError::SharedMemoryTooLarge { static_bytes: 40960, .. }), "{err}");
}

/// Half precision as `cuda_fp16.h` emits it (inline-asm blocks with their own
/// registers), against values worked out by hand, ties included.
#[test]
fn half_precision_arithmetic_as_cuda_fp16_emits_it() {
    let body = "
    cvt.rn.f16.f32 %rs1, %f2;
    cvt.rn.f16.f32 %rs2, %f3;
    cvt.rn.f16.f32 %rs3, %f4;
    { add.f16 %rs4, %rs1, %rs2; }
    { fma.rn.f16 %rs5, %rs1, %rs2, %rs3; }
    { .reg .pred __$temp3;
      setp.lt.f16 __$temp3, %rs1, %rs2;
      selp.u16 %rs6, 1, 0, __$temp3; }
    { mul.f16 %rs7, %rs1, %rs2; }
    { sub.f16 %rs8, %rs1, %rs2; }
    { max.f16 %rs9, %rs1, %rs2; }
    { neg.f16 %rs10, %rs9; }
    { abs.f16 %rs11, %rs10; }
    mov.b32 %r10, {%rs1, %rs2};
    mov.b32 %r11, {%rs3, %rs3};
    { fma.rn.f16x2 %r12, %r10, %r11, %r10; }
    cvt.rn.f16x2.f32 %r13, %f2, %f3;
    cvt.rn.bf16.f32 %rs12, %f4;
    cvt.f32.bf16 %f10, %rs12;
    mov.b32 %r14, %f10;
    { .reg .pred %lo, %hi;
      setp.gt.f16x2 %lo|%hi, %r10, %r11;
      selp.u32 %r15, 1, 0, %lo;
      selp.u32 %r16, 2, 0, %hi;
      add.u32 %r15, %r15, %r16; }
    cvt.u32.u16 %r20, %rs4;
    cvt.u32.u16 %r21, %rs5;
    cvt.u32.u16 %r22, %rs6;
    cvt.u32.u16 %r23, %rs7;
    cvt.u32.u16 %r24, %rs8;
    cvt.u32.u16 %r25, %rs10;
    cvt.u32.u16 %r26, %rs11;
"
    .to_string()
        + &st(0, "%r20")
        + &st(1, "%r21")
        + &st(2, "%r22")
        + &st(3, "%r23")
        + &st(4, "%r24")
        + &st(5, "%r25")
        + &st(6, "%r26")
        + &st(7, "%r12")
        + &st(8, "%r13")
        + &st(9, "%r14")
        + &st(10, "%r15");
    let f = |x: f32| x.to_bits();
    let inputs = vec![
        [f(1.0), f(2.0), f(0.5), 0],
        // 2048 + 1 = 2049 is halfway between 2048 and 2050: ties to even
        [f(2048.0), f(1.0), f(1.0), 0],
        // 2048 * (1 + 2^-10) + 1 = 2051: halfway between 2050 and 2052, to 2052
        [f(2048.0), f(1.0 + 1.0 / 1024.0), f(1.0), 0],
        // bf16 of 1 + 2^-8 + 2^-9 (above the tie): 1 + 2^-7
        [f(-3.0), f(65504.0), f(1.0 + 1.0 / 256.0 + 1.0 / 512.0), 0],
    ];
    let out = run(&body, &inputs);
    // f16 bit patterns
    let (one, two, half, three, two_and_half) = (0x3c00, 0x4000, 0x3800, 0x4200, 0x4100);
    assert_eq!(&out[0][..7], &[three, two_and_half, 1, two, 0xbc00, 0xc000, two]);
    // fma.f16x2 of {1, 2} * {0.5, 0.5} + {1, 2} = {1.5, 3}
    assert_eq!(out[0][7], 0x3e00 | three << 16);
    // cvt.rn.f16x2.f32 d, a, b: a in the high half
    assert_eq!(out[0][8], two | one << 16);
    assert_eq!(out[0][9], f(0.5));
    // {1, 2} > {0.5, 0.5}: both halves
    assert_eq!(out[0][10], 3);
    let _ = half;
    assert_eq!(out[1][0], 0x6800, "2049 rounds to 2048 (even)");
    assert_eq!(out[1][1], 0x6800, "fma 2048*1 + 1 rounds to 2048 (even)");
    assert_eq!(out[2][1], 0x6802, "fma 2048*(1+2^-10) + 1 = 2051 rounds to 2052");
    assert_eq!(out[2][0], 0x6801, "2048 + (1 + 2^-10) = 2049.0009... rounds to 2050");
    assert_eq!(out[3][9], f(1.0 + 1.0 / 128.0), "bf16 rounding above the tie");
    assert_eq!(out[3][3], 0xfc00, "-3 * 65504 overflows to -inf");
    assert_eq!(out[3][0], 0x7bff, "-3 + 65504 = 65501: the halves there are 32 apart; 65504 is nearest");
}

/// `add`/`sub`/`min`/`max` on `.s16x2`/`.u16x2` (PTX ISA 8.0; clang emits them
/// for `short2` arithmetic): each 16-bit half on its own, wrapping.
#[test]
fn packed_16_bit_halves() {
    let ops = [
        "add.s16x2",
        "add.u16x2",
        "sub.s16x2",
        "sub.u16x2",
        "min.s16x2",
        "min.u16x2",
        "max.s16x2",
        "max.u16x2",
        "min.relu.s16x2",
        "max.relu.s16x2",
    ];
    let body: String = ops
        .iter()
        .enumerate()
        .map(|(j, op)| format!("    {op} %r{}, %r2, %r3;\n{}", 10 + j, st(j, &format!("%r{}", 10 + j))))
        .collect();
    let halves = |v: u32| [v as u16, (v >> 16) as u16];
    let pack = |h: [u16; 2]| h[0] as u32 | (h[1] as u32) << 16;
    let each = |a: u32, b: u32, f: &dyn Fn(u16, u16) -> u16| {
        let (x, y) = (halves(a), halves(b));
        pack([f(x[0], y[0]), f(x[1], y[1])])
    };
    let s = |h: u16| h as i16;
    let mut inputs =
        vec![[0x7fff_8000, 0x0001_ffff, 0, 0], [0xffff_0001, 0x8000_7fff, 0, 0], [0x1234_fedc, 0xfedc_1234, 0, 0]];
    let mut x = 0x9e37_79b9u32;
    for _ in 0..29 {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        let a = x;
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        inputs.push([a, x, 0, 0]);
    }
    let out = run(&body, &inputs);
    for (t, w) in inputs.iter().enumerate() {
        let (a, b) = (w[0], w[1]);
        let want = [
            each(a, b, &|x, y| x.wrapping_add(y)),
            each(a, b, &|x, y| x.wrapping_add(y)),
            each(a, b, &|x, y| x.wrapping_sub(y)),
            each(a, b, &|x, y| x.wrapping_sub(y)),
            each(a, b, &|x, y| s(x).min(s(y)) as u16),
            each(a, b, &|x, y| x.min(y)),
            each(a, b, &|x, y| s(x).max(s(y)) as u16),
            each(a, b, &|x, y| x.max(y)),
            each(a, b, &|x, y| s(x).min(s(y)).max(0) as u16),
            each(a, b, &|x, y| s(x).max(s(y)).max(0) as u16),
        ];
        for (j, op) in ops.iter().enumerate() {
            assert_eq!(out[t][j], want[j], "{op} {a:#010x}, {b:#010x}");
        }
    }
    // `.relu` is only for signed min and max
    for bad in ["add.relu.s16x2", "min.relu.u16x2", "mul.s16x2"] {
        match load_err(&kernel(&format!("    {bad} %r10, %r2, %r3;"))) {
            SimError::Unsupported { instruction, .. } => assert!(instruction.contains(bad), "{instruction}"),
            e => panic!("{bad}: {e}"),
        }
    }
}

/// Local memory is counted, generic accesses that reach a thread's frame too.
#[test]
fn local_loads_and_stores_are_counted() {
    let body = "
    .local .align 16 .b8 depot[32];
    mov.u64 %rd11, depot;
    st.local.v2.u32 [%rd11+8], {%r2, %r3};
    ld.local.u32 %r16, [%rd11+12];
    cvta.local.u64 %rd12, %rd11;
    ld.u32 %r17, [%rd12+8];
    st.global.u32 [%rd4], %r16;
    st.global.u32 [%rd4+4], %r17;
";
    let mut sim = Simulator::new(SimConfig::default());
    let m = sim.load_module(&kernel(body)).unwrap_or_else(|e| panic!("{e}"));
    let (pin, pout) = (sim.alloc(64 * 64).unwrap(), sim.alloc(64 * 64).unwrap());
    let rep = sim.launch(m, "t", (1, 1, 1), (40, 1, 1), 0, &[ParamValue::U64(pout), ParamValue::U64(pin)]).unwrap();
    let s = &rep.stats;
    // 40 threads: two warps, the second with 8 lanes
    assert_eq!((s.local_store_requests, s.local_store_bytes), (2, 40 * 8));
    assert_eq!((s.local_load_requests, s.local_load_bytes), (4, 40 * 8));
    assert!(s.report().contains("local"), "{}", s.report());
    let rows: Vec<_> = s.per_instruction.iter().filter(|r| r.kind == ptx_sim::AccessKind::LocalStore).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].thread_accesses, 40);
}
