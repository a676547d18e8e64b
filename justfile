# Shortcuts for working on agentctx (https://github.com/casey/just). Each recipe is one plain
# command you can also type yourself.

# install every package and extra from the lock
install:
    uv sync --all-packages --all-extras --frozen --compile-bytecode

# the README's test command: every test
test *args:
    uv run --frozen pytest {{args}}

# tests without the slow ones (wheel build, browser)
quick *args:
    uv run --frozen pytest -m "not slow and not browser" {{args}}

# the benchmarks (bench/README.md), e.g. `just bench --benchmark-autosave`
bench *args:
    uv run --frozen pytest bench {{args}}

# end-to-end tests only
e2e *args:
    uv run --frozen pytest tests-e2e {{args}}

fmt:
    uv run --frozen ruff format .

lint:
    uv run --frozen ruff format --check .
    uv run --frozen ruff check .

# build every wheel and sdist into dist/
build:
    scripts/build-dist

# what CI runs, from nothing
ci:
    .ci/run

# the end-to-end tour on a throwaway store
demo:
    uv run --frozen agentctx demo
