async fn answer() -> u32 {
    42
}

#[spinpark::main(worker_threads = 2, spin = "50us", max_spinners = 1)]
async fn main() {
    assert_eq!(answer().await, 42);
}
