"""Which client and which hook produced what (issue 20), through the API: a record says its
client and hook, and each session its client and injection log (seeded by the `origins` fixture
through the hooks' own provenance functions, so the dashboard reads what the hooks write). The
same in real Chromium: `test_ui_browser.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi.testclient import TestClient

if TYPE_CHECKING:
    from conftest import Seeded


SESSION = "gemini-sess-1"  # the Gemini session the `origins` fixture seeds


def test_a_record_says_which_client_and_hook_produced_it(
    client: TestClient, seeded: Seeded, origins: dict[str, str]
) -> None:
    made = origins
    assert client.get(f"/api/records/{made['stub']}").json()["origin"] == {"client": "gemini", "hook": "AfterTool"}
    assert client.get(f"/api/records/{made['extracted']}").json()["origin"] == {"client": "codex"}
    assert client.get(f"/api/records/{seeded.convention}").json()["origin"] == {}  # written by hand
    listed = client.get("/api/records").json()["records"]
    assert listed and all(record["origin"] is None for record in listed)  # only when reading one


def test_sessions_carry_their_client_and_injection_log(
    client: TestClient, seeded: Seeded, origins: dict[str, str]
) -> None:
    sessions = {item["session_id"]: item for item in client.get("/api/sessions").json()["sessions"]}
    gemini = sessions[SESSION]
    assert gemini["client"] == "gemini"
    assert gemini["injection_log"] == [
        {
            "at": "2026-12-01T10:00:00Z",
            "client": "gemini",
            "hook": "BeforeAgent",
            "ids": [seeded.decision],
            "tokens": 85,
        },
        {
            "at": "2026-12-01T10:05:00Z",
            "client": "gemini",
            "hook": "BeforeAgent",
            "ids": [seeded.convention, seeded.linked],
            "tokens": 140,
        },
    ]
    assert sessions["codex-sess-1"]["client"] == "codex" and sessions["codex-sess-1"]["injection_log"] == []
    assert sessions["sess-alpha-1"]["client"] is None  # a session from before clients were recorded
    assert SESSION not in {item["session_id"] for item in client.get("/api/sessions?project=p-beta").json()["sessions"]}
