"""The real binary for the client tests: `earshot serve` (EARSHOT_BIN, default target/debug/earshot)
on a free loopback port with a fresh data directory and one admin token, ready (/readyz) before
the first test of a class and stopped after its last.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from typing import BinaryIO

import httpx

from earshot_client import AuthenticatedClient, Client
from earshot_client.api.service import readyz

ROOT = Path(__file__).resolve().parents[3]
TOKEN = "figure-1-admin-token-for-the-client-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ServerTestCase(unittest.TestCase):
    """Starts one `earshot serve` for the class; `client` has the admin token."""

    server: subprocess.Popen[bytes]
    workdir: tempfile.TemporaryDirectory[str]
    base_url: str
    log: BinaryIO
    client: AuthenticatedClient

    @classmethod
    def setUpClass(cls) -> None:
        binary = Path(os.environ.get("EARSHOT_BIN", ROOT / "target/debug/earshot"))
        if not binary.is_file():
            raise unittest.SkipTest(f"no earshot binary at {binary} (cargo build -p earshot)")
        cls.workdir = tempfile.TemporaryDirectory(prefix="earshot-py-client-")
        work = Path(cls.workdir.name)
        config = work / "earshot.toml"
        config.write_text(f'[[tokens]]\nname = "client-test"\ntoken = "{TOKEN}"\nscope = "admin"\n')
        port = _free_port()
        cls.base_url = f"http://127.0.0.1:{port}"
        cls.log = open(work / "server.log", "wb")
        cls.server = subprocess.Popen(
            [str(binary), "serve", "--config", str(config), "--data", str(work / "data"), "--bind", f"127.0.0.1:{port}"],
            stdout=cls.log,
            stderr=subprocess.STDOUT,
        )
        # /readyz is open (no token): the generated client's unauthenticated Client.
        probe = Client(base_url=cls.base_url, timeout=httpx.Timeout(1.0))
        cls.addClassCleanup(probe.get_httpx_client().close)
        deadline = time.monotonic() + 30
        while True:
            if cls.server.poll() is not None:
                cls._stop()
                raise RuntimeError(f"earshot exited early:\n{(work / 'server.log').read_text()}")
            try:
                if readyz.sync_detailed(client=probe).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                cls._stop()
                raise RuntimeError("earshot did not become ready within 30 s")
            time.sleep(0.1)
        cls.client = AuthenticatedClient(base_url=cls.base_url, token=TOKEN, raise_on_unexpected_status=True)
        cls.addClassCleanup(cls.client.get_httpx_client().close)

    @classmethod
    def _stop(cls) -> None:
        cls.server.terminate()
        try:
            cls.server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            cls.server.kill()
            cls.server.wait()
        cls.log.close()

    @classmethod
    def tearDownClass(cls) -> None:
        cls._stop()
        cls.workdir.cleanup()
