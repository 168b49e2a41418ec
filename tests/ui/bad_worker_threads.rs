#[spinpark::main(worker_threads = "x")]
async fn main() {}

#[spinpark::test(worker_threads = 0)]
async fn zero_workers() {}
