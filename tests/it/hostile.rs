//! Hostile clients against the real binary: silent connections beyond the connection limit, a
//! client sending its headers a byte a second, an idle keep-alive connection and a request whose
//! body never comes. A normal client must still be served promptly, and the server must close
//! each of the others within its configured timeouts.

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use crate::e2e::{expect_status, Server};

const MAX_CONNECTIONS: usize = 8;
/// Silent connections opened, well over the limit.
const SILENT: usize = 3 * MAX_CONNECTIONS;
const HEADER_TIMEOUT: Duration = Duration::from_secs(4);
const REQUEST_TIMEOUT: Duration = Duration::from_millis(1500);
/// Slack for a loaded CI machine on top of a configured timeout.
const SLACK: Duration = Duration::from_secs(3);

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect to 127.0.0.1");
    s.set_write_timeout(Some(Duration::from_secs(5))).expect("write timeout");
    s
}

/// Waits until the server closes `s` (end of stream or reset), at most until `deadline`.
/// Returns when it closed, or `None` if it was still open at the deadline. Bytes the server
/// sends first (an error answer) are read and ignored.
fn closed_by(s: &mut TcpStream, deadline: Instant) -> Option<Instant> {
    let mut buf = [0u8; 1024];
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        s.set_read_timeout(Some(left.max(Duration::from_millis(1)))).expect("read timeout");
        match s.read(&mut buf) {
            Ok(0) => return Some(Instant::now()),
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => return None,
            Err(_) => return Some(Instant::now()),
        }
    }
}

/// Reads one HTTP/1.1 response with a `content-length` body; returns (status line, body).
fn read_response(s: &mut TcpStream) -> (String, String) {
    s.set_read_timeout(Some(Duration::from_secs(10))).expect("read timeout");
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        let text = String::from_utf8_lossy(&data).to_string();
        if let Some(end) = text.find("\r\n\r\n") {
            let len = text[..end]
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string()))
                .and_then(|v| v.parse::<usize>().ok())
                .expect("a content-length header");
            if data.len() >= end + 4 + len {
                let status = text.lines().next().unwrap_or_default().to_string();
                return (status, text[end + 4..end + 4 + len].to_string());
            }
        }
        let n = s.read(&mut buf).expect("reading a response");
        assert!(n > 0, "the server closed before answering; got {text:?}");
        data.extend_from_slice(&buf[..n]);
    }
    panic!("no complete response within 10 s");
}

#[test]
fn hostile_clients_cannot_starve_a_normal_one_and_are_closed_in_time() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = dir.path().join("earshot.toml");
    std::fs::write(
        &config,
        format!(
            "consistency_wait_ms = 200\nmax_connections = {MAX_CONNECTIONS}\nheader_read_timeout_ms = {}\nrequest_timeout_ms = {}\n",
            HEADER_TIMEOUT.as_millis(),
            REQUEST_TIMEOUT.as_millis()
        ),
    )
    .expect("write config");
    let server = Server::start(&dir.path().join("data"), Some(&config)).unwrap_or_else(|e| panic!("{e}"));
    let addr = server.addr;
    assert!(addr.ip().is_loopback());
    // The log line that reports the address is read on another thread: wait (bounded) for it to
    // reach the captured log rather than racing it.
    let wanted = format!("max_connections={MAX_CONNECTIONS}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !server.log().contains(&wanted) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    let log = server.log();
    assert!(log.contains(&wanted), "the limits were not applied:\n{log}");

    // Silent connections, three times the limit; the kernel's backlog takes those not accepted.
    let opened = Instant::now();
    let mut silent: Vec<TcpStream> = (0..SILENT).map(|_| connect(addr)).collect();

    // A client that sends its request head a byte a second, for at most 20 bytes.
    let slow = thread::spawn(move || {
        let mut s = connect(addr);
        let started = Instant::now();
        for b in b"GET /healthz HTTP/1.1\r\nHost: x\r\n".iter().take(20) {
            if s.write_all(&[*b]).is_err() {
                return Some(started.elapsed());
            }
            // A close shows up as end of stream within the second we wait anyway.
            s.set_read_timeout(Some(Duration::from_secs(1))).expect("read timeout");
            let mut buf = [0u8; 256];
            match s.read(&mut buf) {
                Ok(0) => return Some(started.elapsed()),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Ok(_) | Err(_) => return Some(started.elapsed()),
            }
        }
        None
    });
    thread::sleep(Duration::from_millis(1500));

    // (a) A normal client is served promptly although the limit is taken by silent ones.
    let started = Instant::now();
    let ready = server.client().call("GET", "/readyz", None);
    expect_status(&ready, 200);
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(3), "a normal client waited {waited:?} behind silent connections");

    // (b) Every silent connection is closed by the server, within the header timeout.
    let deadline = opened + HEADER_TIMEOUT + SLACK;
    for (i, s) in silent.iter_mut().enumerate() {
        let closed = closed_by(s, deadline);
        assert!(closed.is_some(), "silent connection {i} was still open {:?} after it connected", opened.elapsed());
    }
    let slow_closed = slow.join().expect("slow client thread");
    match slow_closed {
        Some(after) => assert!(after <= HEADER_TIMEOUT + SLACK, "the slow client was closed only after {after:?}"),
        None => panic!("the slow-header client was never closed"),
    }

    // (c) An idle keep-alive connection is closed after the header (idle) timeout, not before
    // it has been idle for a good part of it.
    let mut idle = connect(addr);
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").expect("send request");
    let (status, body) = read_response(&mut idle);
    assert!(status.contains(" 200 "), "{status} {body}");
    let answered = Instant::now();
    let closed = closed_by(&mut idle, answered + HEADER_TIMEOUT + SLACK);
    let after = closed.map(|c| c.duration_since(answered));
    assert!(
        after.is_some_and(|a| a >= HEADER_TIMEOUT / 2),
        "the idle keep-alive connection closed after {after:?}, expected about {HEADER_TIMEOUT:?}"
    );

    // A request whose body never comes is answered by the request timeout in the error shape.
    let mut stalled = connect(addr);
    stalled
        .write_all(
            b"POST /v1/stores HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{",
        )
        .expect("send head");
    let started = Instant::now();
    let (status, body) = read_response(&mut stalled);
    assert!(status.contains(" 503 "), "{status} {body}");
    let v: serde_json::Value = serde_json::from_str(&body).expect("JSON error body");
    assert_eq!(v["error"]["code"], "request_timeout", "{body}");
    assert!(started.elapsed() < REQUEST_TIMEOUT + SLACK, "answered after {:?}", started.elapsed());

    // The service is still healthy afterwards.
    expect_status(&server.client().call("GET", "/readyz", None), 200);
}
