extern crate spinpark as sp;

#[sp::main(crate = "sp")]
async fn main() {
    let value = async { 6 * 7 }.await;
    assert_eq!(value, 42);
}
