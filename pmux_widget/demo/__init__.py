"""`make demo`: a fleet of Claude sessions with no account and no network.

The scripted fleet (`scripted_fleet.ScriptedFleet`) runs each session as a simulated Claude
process in a tmux pane (`sim_claude`: hooks through the installed hook script, a PID file, the CLI's
screens and keys, so actions work on it); `--real` runs real Claude Code CLIs in tmux
(`claude_cli`) against a scripted Messages API server (`scripted_model`). `launcher` starts it
all and JupyterLab.
"""
