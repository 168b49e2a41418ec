#[spinpark::main(flavor = "single_thread")]
async fn main() {}

#[spinpark::test(flavor = current_thread)]
async fn flavor_not_a_string() {}

#[spinpark::test(flavor = "current_thread", worker_threads = 2)]
async fn workers_on_a_current_thread_runtime() {}

#[spinpark::main(flavor = "current_thread", max_spinners = 1)]
async fn spinners_on_a_current_thread_runtime() {}

#[spinpark::test(flavor = "multi_thread", flavor = "current_thread")]
async fn flavor_twice() {}
