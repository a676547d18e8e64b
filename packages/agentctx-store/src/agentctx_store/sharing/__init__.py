"""Sharing records beyond this store: the team file committed with the code (`team`, with
`team_state` for SessionStart's cheap has-it-changed check) and Markdown/JSONL export and
import (`transfer`). Empty itself, so importing `team_state` loads nothing else."""
