//! Generates the gRPC messages (prost) and the grpcio client and service
//! of `proto/cuzk/v1/proving.proto` into OUT_DIR/cuzk.v1.rs, with the
//! protoc that ships in the protoc-bin-vendored crate (no system protoc).

fn main() {
    let proto = "proto/cuzk/v1/proving.proto";
    println!("cargo:rerun-if-changed={proto}");
    let protoc = protoc_bin_vendored::protoc_bin_path().expect("protoc-bin-vendored has no protoc for this platform");
    std::env::set_var("PROTOC", protoc);
    let mut config = prost_build::Config::new();
    config.service_generator(Box::new(grpcio_compiler::prost_codegen::Generator));
    config.compile_protos(&[proto], &["proto"]).expect("compiling proving.proto");
}
