#[spinpark::test]
fn not_async() {}

fn main() {}
