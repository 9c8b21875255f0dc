fn main() {
    cg_builder::Builder::new().build();
}
