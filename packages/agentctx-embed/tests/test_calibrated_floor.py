"""The relevance floor the store calibrates for itself (issue 31): a project's hybrid floor is
measured against what its own records give the reference prompts (`hybrid.CALIBRATION_PROMPTS`)
with the model in use, kept per project, and measured again when the model changes; a store
whose records have nothing to do with the prompts injects nothing on either path, with the tiny
test model and with the real (bundled) one."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from agentctx_store import Project, Store, config, paths
from agentctx_store.calibration import quantile, read_keyword_floor, reference_texts
from agentctx_store.prompt_answer import PROMPT_TYPES, Asked, compose, rank
from embed_testkit import TOPICS, add

from agentctx_embed import hybrid, service
from agentctx_embed.hybrid import CALIBRATION_PROMPTS, REFERENCE_ANSWER_RATE, Z_ALONE_MARGIN, Calibration, HybridResult
from agentctx_embed.models import DEFAULT_MODEL, Embedder, TokenStates, choose_model, load
from agentctx_embed.tiny import build_tiny_model, words_of

pytestmark = pytest.mark.embed

# Prompts about nothing any of these records say, and none of the reference prompts either.
UNRELATED = [
    "what's the tallest mountain in Europe?",
    "write a limerick about a sleepy cat",
    "how do I convert celsius to fahrenheit in my head?",
    "remind me what a prime number is",
    "who painted the Mona Lisa?",
    "give me a synonym for happy",
    "how many legs does a spider have?",
    "what rhymes with orange?",
]


def seed(store: Store, project: Project) -> None:
    for title, body in TOPICS:
        add(store, project, "convention", title, body)


@pytest.fixture(params=["tiny", "real"])
def embedder(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Embedder:
    """The tiny test model (over these texts' words) or the bundled all-MiniLM-L6-v2."""
    if request.param == "tiny":
        texts = [f"{title} {body}" for title, body in TOPICS] + UNRELATED + list(CALIBRATION_PROMPTS)
        folder = build_tiny_model(tmp_path / "tiny", words_of(texts))
        monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "agentctx/tiny-word-model")
        monkeypatch.setenv("AGENTCTX_EMBED_MODEL_DIR", str(folder))
    else:
        monkeypatch.delenv("AGENTCTX_EMBED_MODEL", raising=False)
        monkeypatch.delenv("AGENTCTX_EMBED_MODEL_DIR", raising=False)
    loaded = load(choose_model(config.load()), allow_download=False)
    assert request.param == "tiny" or loaded.name == DEFAULT_MODEL
    return loaded


@pytest.fixture
def warm(embedder: Embedder, store: Store) -> Iterator[service.Service]:
    served = service.Service(paths.home(), embedder, db_path=store.path)
    try:
        yield served
    finally:
        served.queries.close()
        served.close_store()


def warm_prompt(served: service.Service, project: Project, prompt: str) -> dict[str, object]:
    reply = served.prompt({"cwd": str(project.root), "prompt": prompt, "session_id": "s-1", "budget_ms": 600_000})
    assert reply.get("ok"), reply
    return reply


def test_an_unrelated_store_injects_nothing_on_either_path(
    warm: service.Service, store: Store, project: Project
) -> None:
    seed(store, project)
    warm.sync_all()
    for prompt in UNRELATED:
        asked = Asked(prompt=prompt)
        assert compose(store, project, asked, rank(store, project, asked)).text == "", prompt
        assert warm_prompt(warm, project, prompt)["text"] == "", prompt
    # the service calibrated the keyword path's floor too, which the hook reads: still nothing
    floor, problem = read_keyword_floor(project.project_id)
    assert problem is None and Path(paths.keyword_calibration_path(project.project_id)).is_file()
    for prompt in UNRELATED:
        asked = Asked(prompt=prompt)
        assert compose(store, project, asked, rank(store, project, asked, floor=floor)).text == "", prompt
    # … while a prompt about one of them still gets it, on the warm path
    reply = warm_prompt(warm, project, "which database do the services keep their durable state in, postgres?")
    assert "Use PostgreSQL 16" in str(reply["text"])


def test_numerals_standing_for_words_meet_on_the_warm_path_too(
    warm: service.Service, store: Store, project: Project
) -> None:
    """The hybrid ranking takes its keyword side from `search()`, so `e2e` finds "end-to-end"
    and "kubernetes" finds `k8s` there too, whatever the model makes of the short forms (the tiny
    model gives them unrelated vectors)."""
    seed(store, project)
    add(store, project, "convention", "End-to-end suite needs a browser", "Playwright drives Chromium on staging.")
    add(store, project, "convention", "K8s manifests live in deploy/", "Helm charts, one values file per environment.")
    warm.sync_all()
    assert "End-to-end suite needs a browser" in str(warm_prompt(warm, project, "is the e2e suite flaky?")["text"])
    reply = warm_prompt(warm, project, "where are the kubernetes manifests stored?")
    assert "K8s manifests live in deploy/" in str(reply["text"])


def test_the_calibration_is_kept_per_project_and_shown(warm: service.Service, store: Store, project: Project) -> None:
    seed(store, project)
    warm.sync_all()
    warm_prompt(warm, project, "which database do we use?")
    saved = json.loads(Path(paths.calibration_path(project.project_id)).read_text(encoding="utf-8"))
    assert saved["model"] == warm.embedder.name and saved["records"] == len(TOPICS)
    texts = reference_texts(store, project, PROMPT_TYPES)
    assert texts == list(CALIBRATION_PROMPTS)  # the keyword path's reference texts too: one rule
    assert saved["prompts"] == len(texts) == len(saved["reference_z"])
    assert saved["reference_z"] == sorted(saved["reference_z"])
    median = quantile(saved["reference_z"], 0.5)
    highest = max(saved["reference_z"])
    assert saved["thresholds"]["z_alone"] == pytest.approx(highest + Z_ALONE_MARGIN * (highest - median), abs=1e-2)
    # the reference texts' best cosines, and the bound they set on vector evidence alone
    cosines = saved["reference_cosine"]
    assert len(cosines) == len(texts) and cosines == sorted(cosines)
    assert saved["thresholds"]["cosine_alone"] == pytest.approx(hybrid.above_all(cosines), abs=1e-3)
    assert saved["thresholds"]["cosine_alone"] > max(cosines)
    # their token coverage by their best vector match, with the model's own token states
    coverages = saved["reference_coverage"]
    assert len(coverages) == len(texts) and coverages == sorted(coverages)
    assert all(0.0 <= value <= 1.0 for value in coverages)
    expected = hybrid.above_all(coverages, hybrid.COVERAGE_MARGIN)
    assert saved["thresholds"]["coverage_alone"] == pytest.approx(expected, abs=1e-3)
    first = saved["at"]
    warm_prompt(warm, project, "which database do we use?")  # same model, same records: measured once
    assert json.loads(Path(paths.calibration_path(project.project_id)).read_text(encoding="utf-8"))["at"] == first


def test_the_floor_is_measured_again_when_the_model_changes(
    warm: service.Service, embedder: Embedder, store: Store, project: Project
) -> None:
    seed(store, project)
    warm.sync_all()
    warm_prompt(warm, project, "which database do we use?")
    path = Path(paths.calibration_path(project.project_id))
    assert json.loads(path.read_text(encoding="utf-8"))["model"] == embedder.name
    renamed = Embedder(embedder.model, "another/model", embedder.dims)  # the same vectors under another name
    other = service.Service(paths.home(), renamed, db_path=store.path)
    try:
        other.sync_all()
        warm_prompt(other, project, "which database do we use?")
    finally:
        other.queries.close()
        other.close_store()
    assert json.loads(path.read_text(encoding="utf-8"))["model"] == "another/model"
    # the keyword floor (model-free) was measured at the first prompt and is still the hook's
    keyword = Path(paths.keyword_calibration_path(project.project_id))
    assert json.loads(keyword.read_text(encoding="utf-8"))["records"] == len(TOPICS)
    assert read_keyword_floor(project.project_id)[1] is None


def test_the_keyword_floor_is_measured_again_when_the_store_changes(
    warm: service.Service, store: Store, project: Project
) -> None:
    seed(store, project)
    warm.sync_all()
    warm_prompt(warm, project, "which database do we use?")
    keyword = Path(paths.keyword_calibration_path(project.project_id))
    assert json.loads(keyword.read_text(encoding="utf-8"))["records"] == len(TOPICS)
    for number in range(5):  # a fifth more records: both calibrations are stale
        add(store, project, "convention", f"Extra rule {number}", f"Extra body number {number}.")
    warm.sync_all()
    warm_prompt(warm, project, "which database do we use?")
    warm.calibrate_pending()  # the service's background thread, after its embedding pass
    assert json.loads(keyword.read_text(encoding="utf-8"))["records"] == len(TOPICS) + 5


def test_a_stale_calibration_is_measured_again_off_the_prompt_path(
    warm: service.Service, store: Store, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project that grew by a tenth is measured again by the background thread; until then
    its prompts answer on its last calibration, at once, instead of waiting seconds for it
    (and holding every other request back) as they did."""
    seed(store, project)
    warm.sync_all()
    warm_prompt(warm, project, "which database do we use?")
    path = Path(paths.calibration_path(project.project_id))
    first = json.loads(path.read_text(encoding="utf-8"))
    for number in range(5):
        add(store, project, "convention", f"Extra rule {number}", f"Extra body number {number}.")
    warm.sync_all()
    measured: list[str] = []
    real = hybrid.calibrate

    def counting(*args: Any, **kwargs: Any) -> Any:
        measured.append(project.project_id)
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "calibrate", counting)
    warm.wake.clear()
    assert warm_prompt(warm, project, "which database do we use?")["ok"]
    assert measured == [] and warm.wake.is_set()  # answered on the last one; the background is woken
    assert json.loads(path.read_text(encoding="utf-8"))["records"] == first["records"]
    assert warm.calibrate_pending() == 1 and len(measured) == 1
    assert json.loads(path.read_text(encoding="utf-8"))["records"] == len(TOPICS) + 5
    assert warm.calibrate_pending() == 0  # nothing left to measure
    warm_prompt(warm, project, "which database do we use?")
    assert warm.calibrate_pending() == 0 and len(measured) == 1  # current again: not queued


def test_a_project_never_measured_with_this_model_is_measured_at_its_first_prompt(
    warm: service.Service, store: Store, project: Project
) -> None:
    """Nothing of this model's to answer with: the first prompt measures it (on a connection of
    its own), and the answer already uses it."""
    seed(store, project)
    warm.sync_all()
    path = Path(paths.calibration_path(project.project_id))
    assert not path.exists()
    warm_prompt(warm, project, "which database do we use?")
    assert json.loads(path.read_text(encoding="utf-8"))["model"] == warm.embedder.name
    assert warm.calibrate_pending() == 0  # measured at once, keyword floor included: nothing queued
    assert json.loads(path.read_text(encoding="utf-8"))["records"] == len(TOPICS)
    assert Path(paths.keyword_calibration_path(project.project_id)).is_file()


def measured(**values: Any) -> Calibration:
    """A calibration of 100 records whose three reference texts had `values` (z 1, 2, 3 and no
    keyword evidence unless given)."""
    return Calibration(**({"model": "m", "records": 100, "z": (1.0, 2.0, 3.0), "shares": (0.0, 0.0, 0.0)} | values))


def test_a_calibration_goes_stale_with_another_model_or_a_changed_store() -> None:
    known = measured(shares=(0.0, 0.0, 1.0), cosines=(0.1, 0.2, 0.3), coverages=(0.2, 0.3, 0.5))
    assert not known.stale("m", 100) and not known.stale("m", 109)
    assert known.stale("m", 111) and known.stale("m", 89) and known.stale("other", 100)
    assert known.floor().z_alone == 3 + Z_ALONE_MARGIN * (3 - 2) and known.floor().weak_keyword_z == 2.0
    assert known.floor().cosine_alone == pytest.approx(0.3 + Z_ALONE_MARGIN * (0.3 - 0.2))
    assert known.floor().coverage_alone == pytest.approx(0.5 + hybrid.COVERAGE_MARGIN * (0.5 - 0.3))
    small = Calibration(model="m", records=5, z=(0.0,), shares=(0.0,), cosines=(0.1,))
    assert small.floor().z_alone == float("inf")  # too few records to tell a z: vectors alone answer nothing
    assert Calibration.from_json(json.loads(json.dumps(known.as_json()))) == known
    # one written by a version that kept no reference cosines is measured again
    older = {key: value for key, value in known.as_json().items() if key != "reference_cosine"}
    assert Calibration.from_json(older).stale("m", 100)
    # … or no reference coverage (a model with no token states keeps an empty list, and no bound)
    older = {key: value for key, value in known.as_json().items() if key != "reference_coverage"}
    assert Calibration.from_json(older).stale("m", 100)
    tokenless = replace(known, coverages=())
    assert not Calibration.from_json(json.loads(json.dumps(tokenless.as_json()))).stale("m", 100)
    assert tokenless.floor().coverage_alone == float("inf")


def test_vector_evidence_alone_must_also_be_nearer_than_any_reference_text() -> None:
    """z says how far the best record stands out from the project's other records; in a project
    whose records are all alike it stands out on little. Answering on vector evidence alone
    also takes a best cosine above the reference texts' (`cosine_alone`): text about nothing in
    the project never came that near."""
    floor = measured(cosines=(0.20, 0.30, 0.40)).floor()
    strong = floor.z_alone + 1
    assert hybrid._answers(floor, keyword_pass=False, share=0.0, z=strong, cosine=floor.cosine_alone + 0.01)
    assert not hybrid._answers(floor, keyword_pass=False, share=0.0, z=strong, cosine=floor.cosine_alone - 0.01)
    assert not hybrid._answers(floor, keyword_pass=False, share=0.0, z=floor.z_alone - 0.1, cosine=0.99)
    # the bound is for vector evidence alone: a keyword pass or both kinds of evidence still answer
    assert hybrid._answers(floor, keyword_pass=True, share=2.0, z=0.0, cosine=0.0)
    assert hybrid._answers(floor, keyword_pass=False, share=0.6, z=strong, cosine=0.0)
    # the same through `apply_floor`'s signals (`_answers_result`), and the constant floor has no bound
    result = HybridResult(z=strong, keyword_share=0.0, best_cosine=floor.cosine_alone - 0.01)
    assert not hybrid._answers_result(floor, result)
    assert hybrid._answers_result(hybrid.DEFAULT_FLOOR, replace(result, z=hybrid.DEFAULT_FLOOR.z_alone))


def test_the_z_thresholds_are_lifted_until_few_reference_texts_are_answered() -> None:
    # 30 reference texts: 14 stand out on the vector side with some keyword evidence, far
    # enough that their own quantiles would let them through; 2 pass the keyword floor outright
    quiet = [HybridResult(z=1.0 + index / 20, keyword_share=0.0) for index in range(14)]
    near = [
        HybridResult(z=3.0 + index / 10, keyword_share=0.8, top_share=0.8, top_z=3.0 + index / 10)
        for index in range(14)
    ]
    keyword = [HybridResult(z=0.5, keyword_share=2.0, keyword_pass=True) for _ in range(2)]
    signals = quiet + near + keyword
    measured = Calibration(
        model="m",
        records=100,
        z=tuple(sorted(r.z for r in signals)),
        shares=tuple(sorted(r.keyword_share for r in signals)),
    )
    answered = lambda calibration: sum(hybrid._answers_result(calibration.floor(), r) for r in signals) / len(signals)  # noqa: E731
    assert answered(measured) > REFERENCE_ANSWER_RATE  # the quantiles alone answer too many of them
    lift = hybrid.lift(measured, signals)
    assert 0 < lift < hybrid.MAX_LIFT
    assert answered(replace(measured, lift=lift)) <= REFERENCE_ANSWER_RATE
    assert answered(replace(measured, lift=lift - hybrid.LIFT_STEP)) > REFERENCE_ANSWER_RATE  # the least lift
    # what the keyword floor alone answers is not the vectors' to silence: no lift for it
    only_keyword = quiet + [HybridResult(z=0.5, keyword_share=2.0, keyword_pass=True) for _ in range(16)]
    assert hybrid.lift(measured, only_keyword) == 0.0
    lifted = replace(measured, lift=lift)
    assert Calibration.from_json(json.loads(json.dumps(lifted.as_json()))).lift == lift
    assert lifted.floor().z_with_keyword == pytest.approx(measured.floor().z_with_keyword + lift)


def test_vector_evidence_alone_answers_when_the_best_match_covers_the_prompts_words() -> None:
    """In a project of look-alike records the best match of a question it answers need not stand
    out (z); it is near by both measures instead: its cosine above the reference texts' and its
    token coverage of the prompt's words above theirs (`coverage_alone`). Either alone is not
    enough, and coverage is measured only when nothing cheaper decided."""
    floor = measured(cosines=(0.20, 0.30, 0.40), coverages=(0.20, 0.30, 0.40)).floor()
    weak = floor.z_alone - 1  # not standing out from the project's records
    asked: list[str] = []

    def covered(value: float) -> Callable[[], float]:
        def measure() -> float:
            asked.append("coverage")
            return value

        return measure

    near, far = floor.cosine_alone + 0.01, floor.cosine_alone - 0.01
    answers = partial(hybrid._answers, floor, keyword_pass=False, share=0.0, z=weak)
    assert answers(cosine=near, coverage=covered(floor.coverage_alone + 0.01))
    assert not answers(cosine=near, coverage=covered(floor.coverage_alone - 0.01))
    assert len(asked) == 2
    assert not answers(cosine=far, coverage=covered(0.99))  # covered, but the prompt is not near
    assert len(asked) == 2  # … and then coverage is not even measured
    # another rule decided: no inference for coverage
    assert hybrid._answers(floor, keyword_pass=True, share=2.0, z=0.0, cosine=near, coverage=covered(0.0))
    assert len(asked) == 2
    # the constant floor has no coverage bound, and never measures it
    assert not hybrid._answers(hybrid.DEFAULT_FLOOR, keyword_pass=False, share=0.0, z=0.0, coverage=covered(1.0))
    assert len(asked) == 2
    # through a result's signals: measured once, when the floor asks
    result = HybridResult(z=weak, best_cosine=near, measure=covered(floor.coverage_alone + 0.01))
    assert hybrid._answers_result(floor, result) and hybrid._answers_result(floor, result)
    assert len(asked) == 3 and result.coverage == floor.coverage_alone + 0.01


def slowed(embedder: Embedder, monkeypatch: pytest.MonkeyPatch, per_piece_s: float) -> list[str]:
    """Make `embedder.tokens` take `per_piece_s` per word piece (on top of its own time), so an
    inference's cost is known; the texts it was asked for are listed in the list returned."""
    asked: list[str] = []
    real = embedder.tokens

    def tokens(text: str) -> TokenStates | None:
        asked.append(text)
        time.sleep(per_piece_s * embedder.pieces(text))
        return real(text)

    monkeypatch.setattr(embedder, "tokens", tokens)
    return asked


def test_no_inference_for_coverage_starts_that_would_end_past_the_deadline(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm answer must reach the hook before it stops waiting (150 ms from its start), or
    the hook takes the keyword path and the warm answer is lost. `tokens_within` starts an
    inference only when, at the recent cost per word piece (`PieceCost`, which every inference
    it runs adds to), it would end before the deadline."""
    short, same = "flaky tests", "retry budget"
    long = " ".join(["which database migration tool do we use for flaky tests here"] * 12)
    assert 0 < embedder.pieces(short) < embedder.pieces(long) // 20
    asked = slowed(embedder, monkeypatch, 0.004)
    # past the deadline: nothing starts
    assert service.tokens_within(embedder, time.monotonic() - 0.001)(short) is None
    assert asked == []
    # time enough for every inference
    tokens = service.tokens_within(embedder, time.monotonic() + 60)
    assert tokens(short) is not None and tokens(long) is not None
    assert asked == [short, long]
    asked.clear()
    # the first one (~4 ms a piece) leaves time for one as long, not for one twenty times as long
    cost = service.PieceCost()
    tokens = service.tokens_within(embedder, time.monotonic() + 0.004 * embedder.pieces(short) * 10, cost)
    assert tokens(short) is not None
    assert tokens(long) is None
    assert tokens(same) is not None
    assert asked == [short, same]
    # what the last ones cost carries over to the next prompt: this machine is slow now
    cost.add(1.0, 1)
    cost.add(1.0, 1)
    assert service.tokens_within(embedder, time.monotonic() + 0.5, cost)(short) is None
    assert asked == [short, same]


def test_the_service_leaves_coverage_out_rather_than_answer_late(
    warm: service.Service, store: Store, project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through a warm prompt: with a floor that asks the coverage (every other rule off), the
    prompt and the best match are read token by token when the hook's budget leaves time for
    it; when it leaves none after `ANSWER_RESERVE_S`, the answer still comes, decided without."""
    seed(store, project)
    warm.sync_all()
    off = float("inf")
    asking = hybrid.HybridFloor(
        z_alone=off, cosine_alone=-1.0, coverage_alone=2.0, z_with_keyword=off,
        weak_keyword_share=off, weak_keyword_z=off, same_record_share=off,
    )  # fmt: skip
    monkeypatch.setattr(warm, "floor_for", lambda _project, _visible=None: asking)
    asked = slowed(warm.embedder, monkeypatch, 0.0)
    prompt = "which database migration tool do we use?"
    assert warm_prompt(warm, project, prompt)["ids"] == []  # coverage 2.0 is never reached
    assert len(asked) == 2 and asked[0] == prompt
    asked.clear()
    monkeypatch.setattr(service, "ANSWER_RESERVE_S", 600_000 / 1000)  # the whole budget kept for what follows
    assert warm_prompt(warm, project, prompt)["ids"] == []
    assert asked == []


def test_coverage_weighs_the_prompts_words_by_how_rare_they_are_in_the_project() -> None:
    dims = 4
    basis = np.eye(dims, dtype=np.float32)
    prompt = TokenStates(vectors=basis[[0, 1, 2]], words=("the", "flaky", "migration"))
    passage = TokenStates(vectors=basis[[1, 3]], words=("flaky", "tests"))
    # "the" weighs nothing here; "flaky" is matched exactly, "migration" not at all
    assert hybrid.coverage(prompt, passage, {"flaky": 1.0, "migration": 1.0}) == pytest.approx(0.5)
    assert hybrid.coverage(prompt, passage, {"flaky": 3.0, "migration": 1.0}) == pytest.approx(0.75)
    assert hybrid.coverage(prompt, passage, {"flaky": 1.0, "migration": 3.0}) == pytest.approx(0.25)
    assert hybrid.coverage(prompt, passage, {}) == 0.0  # no word of the prompt weighs anything
    assert hybrid.coverage(prompt, TokenStates(vectors=np.zeros((0, dims), np.float32), words=()), {"flaky": 1}) == 0.0


def test_token_states_follow_the_words_of_the_text(embedder: Embedder) -> None:
    text = "How do I type-check just one file? Not the BUILD."
    states = embedder.tokens(text)
    assert states is not None
    assert len(states.words) == len(states.vectors) > 0
    norms = np.linalg.norm(states.vectors, axis=1)
    # unit length; the tiny model has no vector for a word outside its vocabulary
    unknown = norms == 0 if embedder.name != DEFAULT_MODEL else np.zeros_like(norms, dtype=bool)
    assert np.allclose(norms[~unknown], 1.0, atol=1e-4) and not unknown.all()
    assert {"type", "check", "file", "build"} <= set(states.words)  # lowercased, split as the keyword path splits
    assert all(word == word.lower() for word in states.words)


def test_coverage_reads_a_long_record_where_the_prompt_talks_about_it() -> None:
    """The prompt hook gives the service 150 ms for its answer and an inference costs more than
    linearly in its length, so a long record is compared by at most `COVERAGE_CHARS` of its
    embedded text: its type and title, and the stretch of its body holding most of the prompt's
    weight."""
    asked: list[str] = []

    def tokens(text: str) -> TokenStates:
        asked.append(text)
        return TokenStates(vectors=np.eye(2, dtype=np.float32)[:1], words=("ledger",))

    body = "cache " * 120 + "the ledger is reconciled nightly " + "cache " * 300  # the phrase within the embedded 1,200
    long = SimpleNamespace(type="decision", title="Cache invoices", body=body)
    weights = {"ledger": 2.0, "nightly": 1.0, "the": 0.01}
    assert hybrid._coverage_of("ledger?", long, tokens, lambda asked: weights) == pytest.approx(1.0)
    assert asked[0] == "ledger?" and len(asked[1]) <= hybrid.COVERAGE_CHARS
    assert asked[1].startswith("[decision] Cache invoices\n") and "the ledger is reconciled nightly" in asked[1]
    # nothing of the prompt in it: the start; a short record: all of it
    assert hybrid.passage_for(f"[decision] Cache invoices\n{body}", {}).startswith("[decision] Cache invoices\ncache")
    assert hybrid.passage_for("[convention] Short\nA short body.", weights) == "[convention] Short\nA short body."
    # a record no longer current and visible (the store's fetch gave nothing) is no evidence
    assert hybrid._coverage_of("ledger?", None, tokens, lambda asked: weights) is None


def test_coverage_of_a_long_prompt_weighs_only_the_words_the_model_read(
    embedder: Embedder, store: Store, project: Project
) -> None:
    """A prompt of 10,000 characters of distinct words (the most the hook passes on) asks the
    store for the weights of the words within the model's window, not one count per word of the
    prompt (SQLite allows at most 2,000 in one statement)."""
    seed(store, project)
    index = hybrid.VectorIndex(embedder.dims)
    rows = store.conn.execute("SELECT id, project_id, type, title, body FROM records").fetchall()
    index.put(
        [(row[0], row[1], row[2], "") for row in rows],
        embedder.passages([f"[{row[2]}] {row[3]}\n{row[4]}" for row in rows]),
    )
    prompt = " ".join(f"word{number}x" for number in range(1500))[:10_000] + " which database do we use?"
    asked: list[int] = []
    real = hybrid.word_weights

    def counting(conn: Any, words: Any, namespaces: Any) -> dict[str, float]:
        asked.append(len(words))
        return real(conn, words, namespaces)

    found = hybrid.candidates(
        store, project, prompt, index=index, query_vector=embedder.query(prompt), tokens=embedder.tokens
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hybrid, "word_weights", counting)
        assert 0.0 <= found.result.covered() <= 1.0
    assert asked and 0 < asked[0] <= 512


def test_the_project_the_service_starts_in_is_measured_before_its_first_prompt(
    warm: service.Service, store: Store, project: Project, tmp_path: Path
) -> None:
    """The MCP server that hosts the service runs in the project the client opened: that project
    is measured by the background thread after its first embedding pass, so the session's first
    prompt is answered warm; a directory whose project holds no records of its own is not."""
    seed(store, project)
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    assert not warm.expect(str(empty))
    assert warm.expect(str(project.root))
    warm.sync_all()
    assert warm.calibrate_pending() == 1
    saved = json.loads(Path(paths.calibration_path(project.project_id)).read_text(encoding="utf-8"))
    assert saved["records"] == len(TOPICS)
    assert Path(paths.keyword_calibration_path(project.project_id)).is_file()
    saved_path = Path(paths.calibration_path(project.project_id))
    assert [path.name for path in saved_path.parent.glob("*.json")] == [saved_path.name]  # none for `elsewhere`


def test_a_project_not_all_embedded_yet_takes_the_keyword_path_and_is_not_measured(
    warm: service.Service, store: Store, project: Project
) -> None:
    """A service that has not embedded all of a project's records yet (`learn` or an import
    wrote them in bulk, and the background pass is still at it) answers neither a prompt nor a
    search for it: a vector ranking of part of the project, against a pool of part of it,
    answered worse than the keyword path. Nor does it measure the project's floor on part of it."""
    seed(store, project)
    reply = warm.prompt({"cwd": str(project.root), "prompt": "which database do we use?", "budget_ms": 600_000})
    assert "not embedded yet" in str(reply.get("error")) and not reply.get("ok")
    found = warm.search({"cwd": str(project.root), "query": "which database do we use?", "limit": 3})
    assert "not embedded yet" in str(found.get("error"))
    assert not Path(paths.calibration_path(project.project_id)).exists()
    assert warm.wake.is_set()  # the background pass is asked to get on with it, and then to measure it
    warm.sync_all()
    assert warm.calibrate_pending() == 1
    saved = json.loads(Path(paths.calibration_path(project.project_id)).read_text(encoding="utf-8"))
    assert saved["records"] == len(TOPICS)
    assert warm_prompt(warm, project, "which database do we use?")["ok"]
    # another connection writes more than a prompt embeds inline: counted again, not remembered
    for number in range(service.INLINE_EMBED_MAX + 4):
        add(store, project, "convention", f"Bulk rule {number}", f"Bulk body number {number}.")
    reply = warm.prompt({"cwd": str(project.root), "prompt": "which database do we use?", "budget_ms": 600_000})
    assert "not embedded yet" in str(reply.get("error"))
    warm.sync_all()
    assert warm_prompt(warm, project, "which database do we use?")["ok"]


def test_a_project_written_while_the_service_runs_is_measured_after_its_embedding(
    warm: service.Service, store: Store, project: Project
) -> None:
    """`learn` or an import writes a project while the service runs: once the background pass
    has embedded its records, the project is measured without waiting for its first prompt; a
    project whose calibration is current is not measured again."""
    seed(store, project)
    warm.sync_all()
    assert warm.calibrate_pending() == 1
    saved = json.loads(Path(paths.calibration_path(project.project_id)).read_text(encoding="utf-8"))
    assert saved["records"] == len(TOPICS) and saved["model"] == warm.embedder.name
    assert Path(paths.keyword_calibration_path(project.project_id)).is_file()
    add(store, project, "convention", "One more rule", "One more body.")  # not a tenth more
    warm.sync_all()
    assert warm.calibrate_pending() == 0
