"""The ``forty_tools`` scenario (``scenarios/forty_tools.json``): one turn of 40 fast tool
calls, and the hooks one print-mode run of it (``claude -p PROMPT``) fires: what the hook
cost benchmark and the async hook test both count."""

from __future__ import annotations

__all__ = ["HOOKS", "PROMPT", "TOOLS"]

TOOLS = 40
PROMPT = "please make forty fast tool calls"
#: Each hook event of one print-mode run of the scenario, and how many times it fires.
HOOKS = {
    "SessionStart": 1,
    "UserPromptSubmit": 1,
    "PreToolUse": TOOLS,
    "PostToolUse": TOOLS,
    "Stop": 1,
    "SessionEnd": 1,
}
