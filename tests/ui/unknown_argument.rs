#[spinpark::main(worker_threads = 2, flavor = "multi_thread")]
async fn main() {
    // The body is kept (in an `async fn`), so this adds no error of its own.
    async {}.await;
}
