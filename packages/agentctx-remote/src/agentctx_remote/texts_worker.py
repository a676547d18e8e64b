"""A worker of `texts.Checker`: `python -m agentctx_remote.texts_worker` (kept apart from
`texts`, which the package imports, so running it as a module finds nothing imported twice)."""

from agentctx_remote.texts import main

if __name__ == "__main__":
    main()
