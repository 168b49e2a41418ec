// `start_paused` on `main` too, as tokio's: an hour's sleep ends at once.
use std::time::Duration;

#[spinpark::main(flavor = "current_thread", start_paused = true)]
async fn main() {
    let start = spinpark::time::Instant::now();
    spinpark::time::sleep(Duration::from_secs(3600)).await;
    assert!(start.elapsed() >= Duration::from_secs(3600));
}
