"""`agentctx ui` as a user runs it: a real process on 127.0.0.1, the browser opened through
`$BROWSER`, a clear error for a taken port, a clean stop on Ctrl-C, and the install hint
when the `[ui]` extra is missing."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

AGENTCTX = Path(sys.executable).parent / "agentctx"


def start(args: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(AGENTCTX), "ui", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def wait_for_url(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    line = process.stdout.readline()  # the first line names the address
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    assert match, f"no address in {line!r}"
    url = match.group(0)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, headers={"Host": f"127.0.0.1:{match.group(1)}"}, timeout=1).status_code == 200:
                return url
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise AssertionError("the dashboard did not answer")


def stop(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=20)
    return process.returncode, out, err


def test_help_names_the_options() -> None:
    result = subprocess.run([str(AGENTCTX), "ui", "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    for option in ("--port", "--no-open", "--project"):
        assert option in result.stdout


def test_serves_opens_the_browser_and_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "fake-browser"
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n', encoding="utf-8")
    browser.chmod(0o755)
    project = tmp_path / "repo"
    project.mkdir()
    process = start(["--port", "0", "--project", str(project)], env={"BROWSER": str(browser)})
    try:
        url = wait_for_url(process)
        deadline = time.monotonic() + 10
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert opened.read_text(encoding="utf-8").strip() == url
        port = url.rsplit(":", 1)[1].strip("/")
        page = httpx.get(url, headers={"Host": f"localhost:{port}"}, timeout=5)
        assert 'name="agentctx-token"' in page.text
        assert httpx.get(url, headers={"Host": "evil.example"}, timeout=5).status_code == 403
    finally:
        code, out, err = stop(process)
    assert code == 0, err
    assert "Dashboard stopped." in out
    assert "Traceback" not in err


def test_a_taken_port_is_one_clear_error() -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        result = subprocess.run(
            [str(AGENTCTX), "ui", "--no-open", "--port", str(port)], capture_output=True, text=True, timeout=60
        )
    finally:
        holder.close()
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"Error: Port {port} on 127.0.0.1 is already in use (another `agentctx ui`?); "
        f"open http://127.0.0.1:{port}/ if it is, or pick another port with --port {port + 1}."
    )


def test_without_the_extra_it_prints_the_install_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentctx.cli._install import install_command
    from agentctx.cli.app import run

    monkeypatch.setitem(sys.modules, "agentctx_ui.server", None)  # as if agentctx-ui were not installed
    assert run(["ui", "--no-open"]) == 1
    # the hint doctor gives (issue 10 item 9), never the bare PyPI name, which is another project
    hint = install_command("ui")
    assert capsys.readouterr().err == f"The dashboard is not installed. Install it with:\n  {hint}\n"
    assert hint.startswith("`uv sync --all-packages --all-extras --frozen` in ")  # the checkout's environment
