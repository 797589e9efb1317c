//! cargo fuzz target: one HTTP request through the real router (`earshot_tests::fuzzing::http_request`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    earshot_tests::fuzzing::http_request(data);
});
