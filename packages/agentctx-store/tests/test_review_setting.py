"""`review = required` as the prompt path reads it (`agentctx_store.review.review_required`):
the hook's keyword path and the warm service both call it, so they cannot disagree."""

from __future__ import annotations

import json
from pathlib import Path

from agentctx_store import config, paths
from agentctx_store.review import review_required


def test_the_setting_is_read_as_agentctx_config_writes_it() -> None:
    assert not review_required()  # no config.json yet
    config.save({"review": "required"})
    assert review_required()
    config.save({"review": "optional"})
    assert not review_required()


def test_a_file_that_is_not_ours_or_not_json_requires_nothing() -> None:
    path = Path(paths.config_path())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"review": "required"}))  # no `_written_by` marker: not ours
    assert not review_required()
    path.write_text('{"_written_by": "agentctx", "review": "required"')  # cut short
    assert not review_required()
    path.write_text(json.dumps(["required"]))
    assert not review_required()
