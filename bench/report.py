"""Markdown tables of one saved pytest-benchmark run: one table per group, the median (with IQR,
min, rounds) and every figure the benchmarks attached as `extra_info`.

usage:
  .venv/bin/python bench/report.py                     # the newest run under .benchmarks/, to stdout
  .venv/bin/python bench/report.py RUN.json            # a given run (--benchmark-autosave / --benchmark-json)
  .venv/bin/python bench/report.py --write [RUN.json]  # replace the tables in bench/README.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
README = BENCH_DIR / "README.md"
STORAGE = BENCH_DIR.parent / ".benchmarks"
BEGIN, END = "<!-- report.py: tables begin -->", "<!-- report.py: tables end -->"
UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"))


def newest_run(storage: Path = STORAGE) -> Path:
    runs = sorted(storage.glob("*/*.json"), key=lambda path: path.stat().st_mtime)
    if not runs:
        raise SystemExit(f"no saved run under {storage}: run `uv run pytest bench --benchmark-autosave` first")
    return runs[-1]


def flatten(info: dict[str, Any]) -> dict[str, Any]:
    """Scalars as they are; a dict of scalars as `key.sub` (deeper nesting, e.g. per-kind
    breakdowns, stays in the JSON)."""
    flat: dict[str, Any] = {}
    for key, value in info.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{sub}": inner for sub, inner in value.items() if not isinstance(inner, dict | list)})
        elif not isinstance(value, list) and value is not None:
            flat[key] = value
    return flat


def number(value: float) -> str:
    """Three significant figures or so, never in exponent form: 1,112 / 90.6 / 2.43 / 0.0241."""
    size = abs(value)
    if size >= 100 or value == int(value):
        return f"{value:,.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def cell(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return number(value)
    return str(value).replace("|", "\\|")


def table(group: str, benchmarks: list[dict[str, Any]]) -> str:
    fastest = min(bench["stats"]["median"] for bench in benchmarks)
    scale, unit = next(((factor, name) for factor, name in UNITS if fastest >= factor), UNITS[-1])
    infos = [flatten(bench["extra_info"]) for bench in benchmarks]
    columns = list(dict.fromkeys(key for info in infos for key in info))
    head = ["benchmark", f"median ({unit})", "IQR", "min", "rounds", *columns]
    lines = [f"### {group}", "", "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for bench, info in zip(benchmarks, infos, strict=True):
        stats = bench["stats"]
        row = [
            f"`{bench['name'].removeprefix('test_')}`",
            number(stats["median"] / scale),
            number(stats["iqr"] / scale),
            number(stats["min"] / scale),
            str(stats["rounds"]),
            *(cell(info.get(column, "")) for column in columns),
        ]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def load(values: list[float] | None) -> str:
    return " / ".join(f"{value:.1f}" for value in values) if values else "not recorded"


def render(run: dict[str, Any], source: str) -> str:
    machine, commit = run.get("machine_info", {}), run.get("commit_info", {})
    groups: dict[str, list[dict[str, Any]]] = {}
    for bench in run["benchmarks"]:
        groups.setdefault(bench.get("group") or "ungrouped", []).append(bench)
    intro = (
        f"Run `{source}` of {run.get('datetime', '?')[:19]} UTC, commit {str(commit.get('id', '?'))[:10]}"
        f"{' (dirty)' if commit.get('dirty') else ''}; {machine.get('cpu', {}).get('count', '?')} CPUs "
        f"({machine.get('cpu', {}).get('brand_raw', '?')}), Python {machine.get('python_version', '?')}; "
        f"load average (1/5/15 min) {load(machine.get('loadavg_start'))} at the start, "
        f"{load(machine.get('loadavg_end'))} at the end."
    )
    return "\n\n".join([intro, *(table(group, benches) for group, benches in sorted(groups.items()))])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", nargs="?", type=Path, help="a saved run (default: the newest under .benchmarks/)")
    parser.add_argument("--write", action="store_true", help=f"replace the tables in {README.name}")
    parser.add_argument("--readme", type=Path, default=README, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    path = args.run or newest_run()
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(
            f"cannot read {path}: {exc}. Give a file written by --benchmark-autosave or --benchmark-json."
        ) from None
    text = render(run, path.name)
    if not args.write:
        print(text)
        return 0
    readme = args.readme.read_text(encoding="utf-8")
    if BEGIN not in readme or END not in readme:
        raise SystemExit(f"{args.readme} has no {BEGIN} … {END} markers: put them where the tables go")
    head, rest = readme.split(BEGIN, 1)
    _old, tail = rest.split(END, 1)
    args.readme.write_text(f"{head}{BEGIN}\n{text}\n{END}{tail}", encoding="utf-8")
    print(f"wrote {len(run['benchmarks'])} benchmarks from {path} into {args.readme}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
