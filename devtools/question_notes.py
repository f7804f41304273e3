"""A hand-observed section of docs/claude-code-behaviour.md: Claude's questions
(``AskUserQuestion``) and plans (``ExitPlanMode``) on 2.1.197, 2.1.332 and 2.1.337 (issue 34,
part 1). Recorded with the scripted model's ``ask_question`` / ``ask_multi`` / ``ask_several``
/ ``offer_plan`` scenarios in tmux; the screens are test fixtures
(``tests/fixtures/screens/<version>-questions/``, read by ``tests/test_ask_screen.py``) and
``tests/real_claude/test_answer.py`` drives them. Kept here so that the generated document
keeps it."""

from __future__ import annotations

__all__ = ["QUESTIONS_AND_PLANS"]

QUESTIONS_AND_PLANS: list[str] = [
    "## Questions and plans (2.1.197, 2.1.332, 2.1.337; recorded 2026-12-07)",
    "",
    "Recorded by hand in tmux (sealed config dir, manual mode; plans with "
    "`--permission-mode plan`), scripted-model scenarios `ask_question`, `ask_multi`, "
    "`ask_several`, `offer_plan`. Screens: `tests/fixtures/screens/<version>-questions/`. "
    "Not produced by the recorder: kept by hand (`devtools/question_notes.py`).",
    "",
    "**The three versions draw both dialogs alike** (2.1.197 indents an option's description "
    "less under a multi-select; 2.1.197 and 2.1.332 word the plan's prompt \"Claude has "
    'written up a plan and is ready to execute. Would you like to proceed?", 2.1.337 "Would '
    'you like to proceed?"). What changed between 2.1.332 and 2.1.337 that matters here: '
    "nothing in hooks, PID file or keys; only that wording.",
    "",
    "| Form | Screen | Hooks, PID file | Transcript (tool result) |",
    "|---|---|---|---|",
    "| one question, single select | a tab bar ` ☐ Colour`, the question, `❯ 1. Purple` / "
    "`2. Amber` (each with its description below), `3. Type something.`, a rule, `4. Chat "
    "about this`, footer `Enter to select · ↑/↓ to navigate · Esc to cancel`. Arrows move, "
    "Enter answers at once; afterwards `● Answered Claude's questions: ⎿ · <question> → "
    "Amber` | `PreToolUse` and `PermissionRequest` (tool `AskUserQuestion`, the full "
    '`questions` input), PID `waiting` (`waitingFor: "input needed"`) — the PID file can '
    "say it before `PermissionRequest` comes; no `Notification`; after the answer "
    "`PostToolUse`, `PostToolBatch`, the next turn, `Stop` | `toolUseResult.answers` "
    '`{question: "Amber"}`; content "Your questions have been answered: …" |',
    "| multi-select | tab bar `←  ☐ Checks  ✔ Submit  →`; `1. [ ] Lint` …, `4. [ ] Type "
    "something`, a `Submit` row; Space or Enter ticks (`[✔]`); an option's digit ticks "
    "(or unticks) that option's box and leaves the selection where it is; Enter on `Submit` "
    'opens "Review your answers" (`● <question> → Lint, Tests`, `❯ 1. Submit answers` / '
    "`2. Cancel`), and so does → (the next tab, `Submit`) from the question's page "
    "(2.1.197, 2.1.332, 2.1.337, 2026-12-07) | as above | `answers` "
    '`{question: "Lint, Tests"}` (labels joined by `, `, in the order they were ticked) |',
    "| several questions | tab bar `←  ☐ Colour  ☐ Size  ✔ Submit  →` (`☒` once answered); "
    "one page per question, Enter answers a page and shows the next, then the review page | "
    "one `PermissionRequest` with both questions | `answers` with one entry per question |",
    '| "Other" | `Type something.` selected, typed text replaces that row\'s label (`❯ 3. '
    'Teal please`); Enter answers | as above | `answers` `{question: "Teal please"}`; '
    'content "The user answered: … Read the answers carefully …" |',
    "| Esc | `● Declined to answer Claude's questions: ⎿ · <question> (Purple / Amber)`, the "
    'turn ends at the prompt | no `PostToolUse` for the question | `toolUseResult` "User '
    'rejected tool use" |',
    "| plan, with a plan file (2.1.197, 2.1.332, 2.1.337) | plan mode's system prompt names "
    '`<config>/plans/<slug>.md` ("create your plan at … using the Write tool"); after the '
    'model wrote it: "Ready to code?", "Here is Claude\'s plan:", the plan between dashed '
    "rules, then `❯ 1. Yes, and use auto mode` / `2. Yes, manually approve edits` / `3. "
    'Tell Claude what to change` (a text field: typed text replaces its label; "shift+tab '
    "to approve with this feedback\"), and the plan file's path | `PermissionRequest` "
    '`ExitPlanMode` with `tool_input` `{"plan": <the file\'s text>, "planFilePath": '
    "…}` (the CLI fills it from the file: the hub needs no file read), a `Notification`; "
    '`permission_mode` `plan` | approved: `{plan, isAgent, filePath}`, content "User has '
    'approved your plan …", the footer leaves plan mode (2.1.332+: "manual mode on" '
    'after choice 2); feedback: "… the user said:\\nMake it purple" and the turn goes on '
    'in plan mode; choice 3 with no text (2.1.337, by hand): "Rejected Claude\'s plan", the '
    "turn ends at the prompt, still in plan mode |",
    '| plan, no plan file (the model calls ExitPlanMode without writing one) | "Exit plan '
    'mode?" / "Claude wants to exit plan mode" / `❯ 1. Yes, and switch to default (ask '
    "each time) for this session` / `2. No`; the plan's text is not drawn | "
    "`PermissionRequest` with `tool_input` `{}` on 2.1.337 (the plan passed by the model is "
    "dropped) | — |",
    "",
    "Rules we follow: a question and a plan are needs-input from `PermissionRequest` (the PID "
    "file's `waiting` may come first, with no questions yet: `answer` is then refused, \"look "
    'again"); `answer` picks options by label (arrows until the screen shows the selection '
    "on it; a multi-select's box is ticked by the digit drawn beside its label, each tick "
    "seen on the screen before the next key, then → to the review page — the Submit row "
    "when Other's text was typed — and the review page's \"Submit answers\"), types "
    "Other's text and checks it is shown before Enter; a plan's `approve` "
    'is "Yes, manually approve edits" (or "switch to default (ask each time)"), another '
    'mode only when named; `deny(text)` is "Tell Claude what to change" with the text. '
    "Enter is never pressed twice: after it the dialog can stay drawn for more than 1.5 s "
    "under load (the CLI redraws once the tool's hooks ran); a second Enter would answer the "
    "next page or land in the prompt box.",
    "",
]
