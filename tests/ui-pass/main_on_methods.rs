// `#[spinpark::main]` on methods (with `self`, `&self` and arguments), in a trait impl and
// an inherent impl, as tokio's macro tests use it; and `name`.
trait A {
    fn f(self) -> u32;
}

impl A for u32 {
    #[spinpark::main]
    async fn f(self) -> u32 {
        spinpark::spawn(async move { self + 1 }).await.unwrap()
    }
}

struct S(u32);

impl S {
    #[spinpark::main(flavor = "current_thread", name = "on-a-method")]
    async fn add(&self, n: u32) -> u32 {
        assert_eq!(spinpark::Handle::current().name(), Some("on-a-method"));
        self.0 + n
    }
}

fn main() {
    assert_eq!(1.f(), 2);
    assert_eq!(S(1).add(2), 3);
}
