#[spinpark::main(crate = "not a path")]
async fn main() {}
