// Without spinpark's `test-util` feature, `start_paused` says which feature is missing.
#[spinpark::test(start_paused = true)]
async fn paused() {}

fn main() {}
