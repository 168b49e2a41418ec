// `flavor = "multi_thread"` is accepted, as in tokio (it is `main`'s default).
#[spinpark::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let handle = spinpark::Handle::current();
    assert_eq!(
        handle.runtime_flavor(),
        spinpark::RuntimeFlavor::MultiThread
    );
    assert_eq!(handle.worker_threads(), 2);
}
