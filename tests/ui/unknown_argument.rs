#[spinpark::main(worker_threads = 2, core_threads = 2)]
async fn main() {
    // The body is kept (in an `async fn`), so this adds no error of its own.
    async {}.await;
}
