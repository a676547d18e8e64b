"""`agentctx models download` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path


def test_models_download_loads_a_local_model(cli, tiny_model: Path) -> None:
    result = cli("models", "download")
    assert result.code == 0, result.err
    assert "Embedding model ready: agentctx/tiny-word-model (32 dimensions)" in result.out


def test_models_says_which_model_is_active_and_whether_it_was_measured(cli, monkeypatch) -> None:
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL", raising=False)
    monkeypatch.delenv("AGENTCTX_EMBED_MODEL_DIR", raising=False)
    shown = cli("models")
    assert shown.code == 0, shown.err
    assert "sentence-transformers/all-MiniLM-L6-v2 (bundled, offline); measured" in shown.out
    doctor = cli("doctor", "--json")
    check = next(check for check in json.loads(doctor.out) if check["name"] == "embedding model")
    assert check["state"] == "ok" and check["extra"]["bundled"] and check["extra"]["measured"]
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "BAAI/bge-small-en-v1.5")
    other = json.loads(cli("models", "--json").out)
    assert (other["bundled"], other["measured"]) == (False, False)
    check = next(check for check in json.loads(cli("doctor", "--json").out) if check["name"] == "embedding model")
    assert check["state"] == "warn" and "not measured" in check["detail"]


def test_status_json_shows_the_floor_inputs_and_the_calibration(
    cli, record, project_dir: Path, tiny_model: Path
) -> None:
    from agentctx_embed import service
    from agentctx_embed.models import choose_model, load
    from agentctx_store import config, paths, resolve_project

    for n in range(3):
        record("decision", f"Background jobs rule {n}", f"Jobs run on temporal workflows, rule {n}.")
    before = json.loads(cli("status", "--json", "-p", str(project_dir)).out)["relevance_floor"]
    assert before["keyword"]["visible_records"] == 3 and before["keyword"]["floor_rare_term_matches"] == 1.4
    # the keyword calibration the hook reads, measured by status itself: too few records, the constant
    keyword = before["keyword"]["calibration"]
    assert (
        keyword["records"] == 3 and keyword["floor"] == 1.4 and len(keyword["reference_levels"]) == keyword["prompts"]
    )
    assert Path(paths.keyword_calibration_path(resolve_project(project_dir).project_id)).is_file()
    assert before["warm"] is None
    embedder = load(choose_model(config.load()), allow_download=False)
    served = service.Service(paths.home(), embedder)
    try:
        served.sync_all()
        served.floor_for(resolve_project(project_dir))
    finally:
        served.queries.close()
        served.close_store()
    warm = json.loads(cli("status", "--json", "-p", str(project_dir)).out)["relevance_floor"]["warm"]
    assert warm["model"] == "agentctx/tiny-word-model" and warm["records"] == 3
    assert warm["prompts"] == keyword["prompts"] == len(warm["reference_z"])  # the same reference texts
    assert set(warm["thresholds"]) == {
        "z_alone",
        "z_with_keyword",
        "same_record_z",
        "weak_keyword_z",
        "cosine_alone",
        "coverage_alone",
    }
    assert len(warm["reference_cosine"]) == len(warm["reference_coverage"]) == warm["prompts"]
    assert set(warm["thresholds"].values()) == {None}  # three records: no z to tell, vectors alone answer nothing
    assert "calibrated" in cli("status", "-p", str(project_dir)).out
