// `flavor = "current_thread"`: tasks run on the thread that runs `main`.
#[spinpark::main(flavor = "current_thread")]
async fn main() {
    let handle = spinpark::Handle::current();
    assert_eq!(
        handle.runtime_flavor(),
        spinpark::RuntimeFlavor::CurrentThread
    );
    let me = std::thread::current().id();
    let there = spinpark::spawn(async { std::thread::current().id() })
        .await
        .unwrap();
    assert_eq!(there, me);
    spinpark::time::sleep(std::time::Duration::from_millis(1)).await;
}
