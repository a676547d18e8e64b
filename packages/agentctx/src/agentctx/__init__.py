"""agentctx: a context layer for coding agents (the CLI and composition root)."""


def __getattr__(name: str) -> str:
    # The version is the installed distribution's (the repository's VERSION file at build time),
    # looked up only when asked: `agentctx hook` imports this package and never needs it.
    if name == "__version__":
        from importlib.metadata import version

        return version("agentctx")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
