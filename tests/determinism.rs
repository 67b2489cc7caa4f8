//! The suite is deterministic: property tests draw from the seed that
//! `.cargo/config.toml` sets (or one the user sets in the environment, which wins), never from
//! a random one that could fail one run in sixty.

#[test]
fn property_tests_draw_from_a_set_seed() {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .expect("PROPTEST_RNG_SEED is set by .cargo/config.toml for every cargo test");
    assert!(
        seed.trim().parse::<u64>().is_ok(),
        "PROPTEST_RNG_SEED must be a whole number, got {seed:?}"
    );
    let config =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/.cargo/config.toml"))
            .unwrap();
    assert!(config.contains("PROPTEST_RNG_SEED"), "{config}");
}
