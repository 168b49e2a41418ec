#[spinpark::main(spin = "5 parsecs")]
async fn main() {}

#[spinpark::test(spin = "1.5ns")]
async fn below_a_nanosecond() {}

#[spinpark::test(spin = 50)]
async fn not_a_string() {}
