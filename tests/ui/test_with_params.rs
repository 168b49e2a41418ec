#[spinpark::test]
async fn takes_a_number(n: u32) {
    assert_eq!(n, 1);
}

fn main() {}
