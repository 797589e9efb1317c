"""A local `earshot serve` for tests and examples (not for production): the given binary (or
EARSHOT_BIN) on a free loopback port with a fresh temporary data directory and one admin token,
ready (/readyz) when the constructor returns; `stop()` ends it and removes the directory.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

TOKEN = "earshot-agents-local-admin-token"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Serve:
    """One `earshot serve` over a temporary data directory; `base_url`, `token`; `stop()`."""

    def __init__(self, binary: str | Path | None = None) -> None:
        binary = Path(binary or os.environ.get("EARSHOT_BIN", "target/debug/earshot"))
        if not binary.is_file():
            raise FileNotFoundError(f"no earshot binary at {binary} (cargo build -p earshot)")
        self.workdir = tempfile.TemporaryDirectory(prefix="earshot-agents-")
        work = Path(self.workdir.name)
        config = work / "earshot.toml"
        config.write_text(f'[[tokens]]\nname = "agents-test"\ntoken = "{TOKEN}"\nscope = "admin"\n')
        port = free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        self.token = TOKEN
        self.log = open(work / "server.log", "wb")
        self.proc = subprocess.Popen(
            [
                str(binary),
                "serve",
                "--config",
                str(config),
                "--data",
                str(work / "data"),
                "--bind",
                f"127.0.0.1:{port}",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                log = (work / "server.log").read_text(errors="replace")
                self.stop()
                raise RuntimeError(f"earshot serve exited early:\n{log}")
            try:
                if httpx.get(self.base_url + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("earshot serve did not become ready within 30 s")
            time.sleep(0.1)

    def __enter__(self) -> Serve:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.log.closed:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        self.workdir.cleanup()
