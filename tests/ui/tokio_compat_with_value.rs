#[spinpark::main(tokio_compat = true)]
async fn main() {
    // `tokio_compat` is a bare flag: `#[spinpark::main(tokio_compat)]`.
    async {}.await;
}
