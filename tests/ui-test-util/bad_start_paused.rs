#[spinpark::main(start_paused = true)]
async fn main() {}

#[spinpark::test(flavor = "multi_thread", start_paused = true)]
async fn paused_on_a_multi_thread_runtime() {}

#[spinpark::test(worker_threads = 2, start_paused = true)]
async fn paused_with_worker_threads() {}

#[spinpark::test(start_paused = "yes")]
async fn paused_not_a_bool() {}
