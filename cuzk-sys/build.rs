//! Compiles native/ (CUDA C++) with nvcc through `cc` and generates Rust
//! bindings for native/cuzk.h with bindgen.
//!
//! nvcc is found at $NVCC, $CUDA_HOME/bin/nvcc, build/cuda/bin/nvcc (what
//! build/install-nvcc.sh installs) or on PATH. Without nvcc the crate builds
//! its documented CPU-only configuration: native/no_cuda.c answers every call
//! with CUZK_ERR_NO_CUDA and `cuzk_sys::AVAILABLE` is false; set
//! CUZK_REQUIRE_CUDA=1 to make a missing nvcc an error instead, or
//! CUZK_NO_CUDA=1 to build the CPU-only configuration even with nvcc.
//!
//! Device code is always optimised (never `-G`, whatever the profile) and
//! built for sm_80, sm_86, sm_89, sm_90 and sm_120 plus compute_120 PTX;
//! CUZK_CUDA_ARCHS=90,89 narrows the machine-code list for quicker builds.

use std::env;
use std::path::{Path, PathBuf};

const DEFAULT_ARCHS: &[&str] = &["80", "86", "89", "90", "120"];
const PTX_ARCH: &str = "120";

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().unwrap().to_path_buf();
    let native = root.join("native");
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());

    println!("cargo:rerun-if-changed={}", native.display());
    for var in ["NVCC", "CUDA_HOME", "CUZK_CUDA_ARCHS", "CUZK_CUDA_STANDALONE", "CUZK_REQUIRE_CUDA", "CUZK_NO_CUDA"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo::rustc-check-cfg=cfg(cuzk_cuda)");

    generate_bindings(&native, &out);

    let no_cuda = env::var_os("CUZK_NO_CUDA").is_some_and(|v| v != "0");
    match find_nvcc(&root).filter(|_| !no_cuda) {
        Some(nvcc) => {
            compile_cuda(&native, &nvcc);
            println!("cargo:rustc-cfg=cuzk_cuda");
        }
        None if env::var_os("CUZK_REQUIRE_CUDA").is_some_and(|v| v != "0") => panic!(
            "cuzk-sys: nvcc not found and CUZK_REQUIRE_CUDA is set. \
             Run build/install-nvcc.sh (installs nvcc 13.0 into build/cuda) or set NVCC."
        ),
        None => {
            println!(
                "cargo:warning=cuzk-sys: nvcc not found; building the CPU-only configuration \
                 (no GPU support). Run build/install-nvcc.sh to get nvcc."
            );
            cc::Build::new().file(native.join("no_cuda.c")).include(&native).compile("cuzk");
        }
    }
}

fn generate_bindings(native: &Path, out: &Path) {
    bindgen::Builder::default()
        .header(native.join("cuzk.h").to_string_lossy())
        .allowlist_function("cuzk_.*")
        .allowlist_type("cuzk_.*")
        .allowlist_var("CUZK_.*")
        .rustified_enum("cuzk_.*")
        .opaque_type("cuzk_stream|cuzk_event|cuzk_gpu_locks|cuzk_ntt_context|cuzk_spmv")
        .derive_default(true)
        .layout_tests(false)
        .generate()
        .expect("bindgen failed on native/cuzk.h (needs libclang: build/install-nvcc.sh installs libclang-dev)")
        .write_to_file(out.join("bindings.rs"))
        .expect("writing bindings.rs");
}

fn find_nvcc(root: &Path) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(p) = env::var_os("NVCC") {
        candidates.push(PathBuf::from(p));
    }
    if let Some(home) = env::var_os("CUDA_HOME") {
        candidates.push(PathBuf::from(home).join("bin/nvcc"));
    }
    candidates.push(root.join("build/cuda/bin/nvcc"));
    if let Some(path) = env::var_os("PATH") {
        candidates.extend(env::split_paths(&path).map(|d| d.join("nvcc")));
    }
    candidates.into_iter().find(|p| p.is_file())
}

fn cuda_sources(dir: &Path, found: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            cuda_sources(&p, found);
        } else if p.extension().is_some_and(|e| e == "cu") {
            found.push(p);
        }
    }
}

// Entry points for tests and benches only (cuzk.h's "tests only"
// section), compiled with the `testing` feature.
const TESTING_ONLY: &[&str] = &["ff/field_test.cu", "msm/test_inputs.cu", "device/fault_hook.cu"];

// CUDA sources built alone (see compile_cuda): CUB's onesweep radix sort
// gets 95 registers as relocatable device code and 80 as a whole program,
// which at 384 threads a block is one block per SM against two.
const STANDALONE: &[&str] = &["msm/sort.cu"];

fn compile_cuda(native: &Path, nvcc: &Path) {
    let mut sources = Vec::new();
    cuda_sources(native, &mut sources);
    let testing = env::var_os("CARGO_FEATURE_TESTING").is_some();
    if !testing {
        sources.retain(|p| !TESTING_ONLY.iter().any(|s| p.ends_with(s)));
    }

    let archs: Vec<String> = match env::var("CUZK_CUDA_ARCHS") {
        Ok(list) if !list.trim().is_empty() => list.split(',').map(|s| s.trim().to_string()).collect(),
        _ => DEFAULT_ARCHS.iter().map(|s| s.to_string()).collect(),
    };

    // cc picks nvcc from $NVCC in CUDA mode (and only then treats it as nvcc,
    // wrapping host flags in -Xcompiler).
    env::set_var("NVCC", nvcc);
    let build_of = |files: &[&PathBuf]| {
        let mut build = cc::Build::new();
        build
            .cuda(true)
            .cudart("static")
            // Never -G (cc adds it for debug builds): unoptimised field
            // arithmetic is useless, and -G changes nothing we need.
            .debug(false)
            .opt_level(3)
            .include(native)
            .flag("-std=c++17")
            .flag("-Xptxas=-O3")
            .flag("-Xcompiler=-fPIC")
            .warnings(false);
        // The fault hook and pinned count of native/test_hooks.cuh.
        if testing {
            build.define("CUZK_TESTING", None);
        }
        for a in &archs {
            build.flag(format!("-gencode=arch=compute_{a},code=sm_{a}"));
        }
        build.flag(format!("-gencode=arch=compute_{PTX_ARCH},code=compute_{PTX_ARCH}"));
        for s in files {
            build.file(s);
        }
        build
    };
    // cc compiles several CUDA files as relocatable device code
    // (--device-c) and one file alone as a whole program. The sources in
    // STANDALONE need the whole program's register allocation, so each is
    // a library of its own (after the main one: it uses them).
    // CUZK_CUDA_STANDALONE adds sources (comma-separated, relative to
    // native/), to measure a whole-program build of them.
    let extra = env::var("CUZK_CUDA_STANDALONE").unwrap_or_default();
    let standalone =
        |p: &PathBuf| STANDALONE.iter().copied().chain(extra.split(',').map(str::trim).filter(|s| !s.is_empty())).any(|s| p.ends_with(s));
    let main: Vec<&PathBuf> = sources.iter().filter(|p| !standalone(p)).collect();
    build_of(&main).compile("cuzk");
    for p in sources.iter().filter(|p| standalone(p)) {
        let stem = p.file_stem().unwrap().to_string_lossy();
        build_of(&[p]).compile(&format!("cuzk_{stem}"));
    }

    // cc looks for cudart next to <nvcc>/../targets/..., which the wheel
    // layout (nvcc reached through a link) does not have: add the folders.
    let nvcc_dir = nvcc.canonicalize().unwrap_or(nvcc.to_path_buf());
    let cuda_home = nvcc_dir.parent().and_then(Path::parent).map(Path::to_path_buf);
    let lexical_home = nvcc.parent().and_then(Path::parent).map(Path::to_path_buf);
    for home in [cuda_home, lexical_home].into_iter().flatten() {
        for sub in ["lib", "lib64", "targets/x86_64-linux/lib"] {
            let d = home.join(sub);
            if d.join("libcudart_static.a").is_file() {
                println!("cargo:rustc-link-search=native={}", d.display());
            }
        }
    }
    // Static cudart needs these at the final link.
    for lib in ["dl", "rt", "pthread"] {
        println!("cargo:rustc-link-lib={lib}");
    }
}
