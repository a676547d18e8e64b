"""Settings in `$AGENTCTX_HOME/config.json` (docs/store.md#the-data-dir), validated on every write.

The file carries a marker so a `config.json` some other program left in the data dir is never
overwritten (the PyPI name `agentctx` belongs to an unrelated tool that also uses ~/.agentctx).
"""

from __future__ import annotations

from agentctx_store import paths
from agentctx_store._frozen import frozen
from agentctx_store.errors import ValidationError
from agentctx_store.files import atomic_write
from agentctx_store.jsontext import is_object

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

MARKER = "_written_by"
MARKER_VALUE = "agentctx"


@frozen
class Setting:
    default: Any
    parse: Callable[[str], Any]
    help: str


def _bool(text: str) -> bool:
    lowered = str(text).strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError("expected a whole number ≥ 1, such as 3") from None
    if value < 1:
        raise ValueError("expected a whole number ≥ 1")
    return value


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError("expected a number ≥ 0, such as 5.0") from None
    if value < 0 or value != value:
        raise ValueError("expected a number ≥ 0")
    return value


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f"expected one of: {', '.join(choices)}")
        return text

    return parse


def _text(text: str) -> str:
    return str(text).strip()


LLM_MODES = ("auto", "api", "client", "off")


def _llm_mode(text: str) -> str:
    """`auto | api | client | off`; the booleans of older configs still read (true = auto)."""
    lowered = str(text).strip().lower().strip('"')
    if lowered in LLM_MODES:
        return lowered
    try:
        return "auto" if _bool(lowered) else "off"
    except ValueError:
        raise ValueError(f"expected one of: {', '.join(LLM_MODES)}") from None


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError("expected a whole number ≥ 0, such as 5000000") from None
    if value < 0:
        raise ValueError("expected a whole number ≥ 0")
    return value


def llm_enabled(settings: dict[str, Any]) -> bool:
    """Whether any model call may be made (`llm` is not `off`)."""
    return _llm_mode(str(settings.get("llm", "auto"))) != "off"


SETTINGS: dict[str, Setting] = {
    "llm": Setting(
        default="auto",
        parse=_llm_mode,
        help=(
            "Extraction, `learn --llm` and re-verification: auto (the API with ANTHROPIC_API_KEY, else the "
            "coding agent's own headless mode), api, client or off."
        ),
    ),
    "embeddings": Setting(
        default=True, parse=_bool, help="Offline embeddings during consolidation ([embeddings] extra)."
    ),
    "model_tier": Setting(default="default", parse=_choice("default", "quality"), help="Embedding model tier."),
    "reinforce_threshold": Setting(
        default=3, parse=_positive_int, help="Sightings that turn an inferred record into a reinforced one."
    ),
    "extraction_model": Setting(default="claude-haiku-4-5", parse=_text, help="Model used for session-end extraction."),
    "monthly_cap_usd": Setting(
        default=5.0, parse=_non_negative_float, help="Stop extraction once a month costs this much."
    ),
    "llm_monthly_tokens": Setting(
        default=5_000_000,
        parse=_non_negative_int,
        help="Stop extraction through a coding agent (no per-call price) once a month sends this many tokens.",
    ),
    "review": Setting(
        default="optional",
        parse=_choice("optional", "required"),
        help="required: extracted records wait in `agentctx review` and are not injected until accepted.",
    ),
    "reverify_auto_apply": Setting(
        default=False,
        parse=_bool,
        help="Apply re-verification proposals for records whose anchored code changed without review.",
    ),
    "embed_model": Setting(
        default="", parse=_text, help="fastembed model name (empty: sentence-transformers/all-MiniLM-L6-v2, bundled)."
    ),
    "embed_model_dir": Setting(default="", parse=_text, help="Local model folder loaded with no network."),
    "team_autoimport": Setting(
        default=False, parse=_bool, help="SessionStart imports a changed .agentctx/context.md (else it says so)."
    ),
    "team_autoexport": Setting(
        default=False, parse=_bool, help="Consolidation rewrites .agentctx/context.md from the store."
    ),
}


def _read_raw(path: Path) -> dict[str, Any] | None:
    """The file's JSON object if it is ours; None if absent; raise if it is someone else's."""
    import json

    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ValidationError(f"Cannot read {str(path)!r} ({exc.strerror}); check its permissions.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = None
    if not is_object(data) or data.get(MARKER) != MARKER_VALUE:
        raise ValidationError(
            f"{str(path)!r} was not written by agentctx; move it aside or set AGENTCTX_HOME to another directory."
        )
    return data


def load(path: Path | None = None) -> dict[str, Any]:
    """Every setting with its value (defaults where unset). A foreign or broken file is
    ignored here (defaults), and refused only when writing."""
    import contextlib
    import json
    from pathlib import Path

    values = {name: setting.default for name, setting in SETTINGS.items()}
    try:
        raw = _read_raw(path or Path(paths.config_path())) or {}
    except ValidationError:
        raw = {}
    for name, setting in SETTINGS.items():
        if name in raw:
            # a hand-edited bad value falls back to the default; `agentctx config` shows it
            with contextlib.suppress(ValueError, TypeError):
                values[name] = setting.parse(raw[name] if isinstance(raw[name], str) else json.dumps(raw[name]))
    return values


def parse_value(name: str, text: str) -> Any:
    """Validate one setting.

    Raises:
        ValidationError: unknown setting or invalid value.
    """
    setting = SETTINGS.get(name)
    if setting is None:
        raise ValidationError(f"Unknown setting {name!r}; known settings: {', '.join(SETTINGS)}.")
    try:
        return setting.parse(text)
    except (ValueError, TypeError) as exc:
        raise ValidationError(f"Invalid value {text!r} for {name}: {exc}.") from None


def save(updates: dict[str, Any], path: Path | None = None) -> dict[str, Any]:
    """Validate and write settings atomically; returns the full resulting settings.

    Raises:
        ValidationError: unknown setting, invalid value, or a config file agentctx did not write.
    """
    import json
    from pathlib import Path

    target = path or Path(paths.config_path())
    raw = _read_raw(target) or {MARKER: MARKER_VALUE}
    for name, value in updates.items():
        raw[name] = parse_value(name, value if isinstance(value, str) else json.dumps(value))
    try:
        atomic_write(target, json.dumps(raw, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        raise ValidationError(
            f"Cannot write {str(target)!r} ({exc.strerror}); make {str(target.parent)!r} writable "
            "or set AGENTCTX_HOME to a folder you can write."
        ) from None
    return load(target)
