//! cargo fuzz target: the relation schema parser on any text (`earshot_tests::fuzzing::schema`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    earshot_tests::fuzzing::schema(data);
});
