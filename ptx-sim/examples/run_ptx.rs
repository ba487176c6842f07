//! Runs a kernel from a PTX file with integer/pointer-free arguments and prints
//! the stats report. Usage: run_ptx FILE.ptx KERNEL [grid] [block]
//! (a debugging aid; buffers are not set up, so only parameterless-ish kernels run).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ptx = std::fs::read_to_string(&args[1]).expect("read PTX");
    let mut sim = ptx_sim::Simulator::new(ptx_sim::SimConfig::default());
    let m = sim.load_module(&ptx).unwrap_or_else(|e| panic!("{e}"));
    for k in sim.kernel_names(m) {
        println!(
            "{k}: {:?}",
            sim.kernel_params(m, &k).unwrap().iter().map(|p| (&p.name, &p.ty, p.size)).collect::<Vec<_>>()
        );
    }
    if args.len() > 2 {
        let n = 1 << 20;
        let params: Vec<ptx_sim::ParamValue> = sim
            .kernel_params(m, &args[2])
            .unwrap()
            .iter()
            .map(|p| {
                if p.size == 8 {
                    ptx_sim::ParamValue::U64(sim.alloc(n).unwrap())
                } else {
                    ptx_sim::ParamValue::I32(64)
                }
            })
            .collect();
        let grid: u32 = args.get(3).map_or(1, |s| s.parse().unwrap());
        let block: u32 = args.get(4).map_or(32, |s| s.parse().unwrap());
        let rep = sim.launch(m, &args[2], (grid, 1, 1), (block, 1, 1), 0, &params).unwrap_or_else(|e| panic!("{e}"));
        println!("{}", rep.stats.report());
    }
}
