"""The agentctx local dashboard: browse, search and correct the context store."""

from importlib.metadata import version

__version__ = version("agentctx-ui")  # the repository's VERSION file, as built into this distribution
