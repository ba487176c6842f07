//! Compiles one `.cu` file and prints its PTX (or the errors), the way the
//! grader would: `cargo run -p ptx-build --example ptxc -- kernels/pi.cu [sm_XY]`.

use std::process::ExitCode;

use ptx_build::{CompileOptions, Compiler, SourceFile};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.first() else {
        eprintln!("usage: ptxc FILE.cu [XY (compute capability, e.g. 86)]");
        return ExitCode::from(2);
    };
    let mut opts = CompileOptions::default();
    if let Some(cc) = args.get(1).and_then(|a| a.trim_start_matches("sm_").parse::<u32>().ok()) {
        opts.arch = (cc / 10, cc % 10);
    }
    let run = || -> Result<(), ptx_build::BuildError> {
        let compiler = Compiler::from_env()?;
        let where_ = compiler.path().map(|p| format!(" ({})", p.display())).unwrap_or_default();
        eprintln!("{}{where_}, {}", compiler.version(), opts.arch_name());
        let ptx = compiler.compile(&SourceFile::read(file.as_ref(), file.as_str())?, &opts)?;
        for d in &ptx.diagnostics {
            eprintln!("{d}");
        }
        print!("{}", ptx.text);
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
