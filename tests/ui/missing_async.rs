#[spinpark::main]
fn main() {
    println!("not async");
}
