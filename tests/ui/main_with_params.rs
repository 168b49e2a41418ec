#[spinpark::main]
async fn main(args: Vec<String>) {
    println!("{args:?}");
}
