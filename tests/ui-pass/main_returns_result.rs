use std::error::Error;

async fn parse(text: &str) -> Result<u32, std::num::ParseIntError> {
    text.parse()
}

#[spinpark::main(spin = "0")]
async fn main() -> Result<(), Box<dyn Error>> {
    // `?` converts the error into the declared return type.
    let n = parse("41").await?;
    if n + 1 != 42 {
        return Err(format!("expected 41, got {n}").into());
    }
    Ok(())
}
