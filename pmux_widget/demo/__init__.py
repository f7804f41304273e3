"""`make demo`: a fleet of Claude sessions with no account and no network.

The scripted fleet (`driver.ScriptedFleet`) drives hook events through the installed hook
script; `--real` runs real Claude Code CLIs in tmux (`claude_cli`) against a scripted
Messages API server (`scripted_model`). `launcher` starts it all and JupyterLab.
"""
