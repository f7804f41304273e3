"""The demo's session scripts: what each scripted session does, turn after turn (see
:data:`pmux_widget.demo.scripted_fleet.PERSONAS` for who runs which).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from .simulated import SimSession

__all__ = [
    "SCRIPTS",
    "Script",
    "script_compact",
    "script_errors",
    "script_lifecycle",
    "script_plan",
    "script_question",
    "script_subagents",
    "script_tests",
]

#: A script: a generator that acts on its session and yields the pause (s) before its next step.
Script = Callable[[SimSession], Iterator[float]]


def script_tests(s: SimSession) -> Iterator[float]:
    """acme-api: permission dialogs (needs-input), a current tool, then review."""
    src = f"{s.cwd}/src/acme/pagination.py"
    tasks = [
        ("run the test suite and fix whatever fails", "2 failed, 140 passed in 8.31s"),
        ("the export job is flaky, find out why", "1 failed, 141 passed in 8.12s"),
    ]
    s.ensure_started()
    yield 1.5
    n = 0
    while True:
        prompt, first_run = tasks[n % len(tasks)]
        n += 1
        s.prompt(prompt)
        yield 1.0
        s.say("I'll run the test suite first.")
        s.tool("Bash", {"command": "uv run pytest -q", "description": "Run the test suite"})
        yield 0.4
        s.ask()
        yield 6.2
        s.remind()
        yield 2.5
        s.tool_done("....F......F....\n" + first_run)
        yield 2.5
        s.tool("Read", {"file_path": src})
        yield 1.0
        s.tool_done("def page_slice(items, page, size):\n    last = page * size\n    ...")
        yield 1.2
        s.say("The last page is dropped: `page_slice()` compares with `<` where it needs `<=`.")
        s.tool(
            "Edit", {"file_path": src, "old_string": "if i < last:", "new_string": "if i <= last:"}
        )
        yield 0.3
        s.ask()
        yield 4.5
        s.tool_done(f"The file {src} has been updated successfully.")
        yield 0.8
        s.tool("Bash", {"command": "uv run pytest -q", "description": "Run the test suite again"})
        yield 3.5
        s.tool_done("................\n142 passed in 8.02s")
        yield 1.2
        s.finish(
            "All 142 tests pass. The last page was cut off by an off-by-one in `page_slice()` "
            "(`<` → `<=`); I added a regression test for it."
        )
        yield 13


def script_subagents(s: SimSession) -> Iterator[float]:
    """web-frontend: two sub-agents at once, a dialog, then review."""
    s.ensure_started()
    yield 2.5
    while True:
        s.prompt("audit the bundle and remove unused dependencies")
        yield 1.2
        s.say("I'll split this: one agent maps the imports, another reads the bundle stats.")
        s.tool(
            "Agent",
            {"description": "Map imports", "prompt": "List every package imported under src/",
             "subagent_type": "Explore"},
        )  # fmt: skip
        s.tool(
            "Agent",
            {"description": "Read bundle stats", "prompt": "Summarize dist/stats.json by size",
             "subagent_type": "general-purpose"},
        )  # fmt: skip
        agents = s.agents_start("Explore", "general-purpose")
        yield 1.5
        s.agent_tool(agents[0], "Grep", {"pattern": "from '[^.]", "path": "src"})
        yield 1.8
        s.agent_tool(agents[1], "Read", {"file_path": f"{s.cwd}/dist/stats.json"})
        yield 2.2
        s.agent_tool(agents[0], "Read", {"file_path": f"{s.cwd}/package.json"})
        yield 1.6
        s.agent_stop(agents[0], "lodash, moment and left-pad are never imported.")
        s.tool_done("lodash, moment and left-pad are never imported.")
        yield 1.4
        s.agent_stop(agents[1], "moment (68 kB) and lodash (71 kB) are the biggest chunks.")
        s.tool_done("moment (68 kB) and lodash (71 kB) are the biggest chunks.")
        yield 1.0
        s.tool("Bash", {"command": "npm uninstall lodash moment left-pad",
                        "description": "Remove unused dependencies"})  # fmt: skip
        yield 0.3
        s.ask()
        yield 4.0
        s.tool_done("removed 3 packages, and audited 812 packages in 3s")
        yield 1.5
        s.tool("Bash", {"command": "npm run build", "description": "Build the bundle"})
        yield 3.0
        s.tool_done("dist/assets/index.js  296.4 kB │ gzip: 94.1 kB\n✓ built in 2.91s")
        yield 1.0
        s.finish(
            "Removed 3 unused dependencies (lodash, moment, left-pad): the bundle went from "
            "412 kB to 296 kB."
        )
        yield 14


def script_errors(s: SimSession) -> Iterator[float]:
    """data-pipeline (not in tmux): a long command, then the API gives up (StopFailure)."""
    failures = [
        ("rate_limit", 429, "API Error: Request rejected (429) · Rate limited, try again later"),
        ("server_error", 529, "API Error: Repeated 529 Overloaded errors. The API is at capacity"),
    ]
    s.ensure_started()
    yield 1.8
    n = 0
    while True:
        error, status, text = failures[n % len(failures)]
        n += 1
        s.prompt("backfill the events table for March")
        yield 0.8
        s.say("Running the backfill for 2026-03.")
        s.tool(
            "Bash",
            {"command": "python -m pipeline.backfill --table events --month 2026-03",
             "description": "Backfill March events"},
        )  # fmt: skip
        yield 4.0
        s.tool_done("backfilled 1,284,112 rows in 4.2s")
        yield 1.0
        s.fail(error, text, status)
        yield 12
        s.prompt("try again and verify the row counts")
        yield 1.0
        s.tool("Bash", {"command": "python -m pipeline.verify --month 2026-03",
                        "description": "Verify March"})  # fmt: skip
        yield 3.5
        s.tool_done("31/31 days ok · 1,284,112 rows · checksums match")
        yield 1.0
        s.finish("March is backfilled and verified: 1,284,112 rows, no gaps, checksums match.")
        yield 12


def script_compact(s: SimSession) -> Iterator[float]:
    """infra: a long turn that auto-compacts, then an Esc interrupt."""
    s.ensure_started()
    yield 2.0
    while True:
        s.context = max(s.context, s.rng.randint(150_000, 168_000))
        s.prompt("plan the terraform upgrade to 1.9 for every environment")
        yield 1.0
        s.say("Let me look at the current plan for production first.")
        s.tool("Bash", {"command": "terraform -chdir=envs/prod plan -no-color",
                        "description": "Plan production"})  # fmt: skip
        yield 2.5
        s.tool_done("Plan: 0 to add, 41 to change, 0 to destroy.")
        yield 0.6
        s.compact_start("auto")
        yield 4.5
        s.compact_end("auto")
        yield 1.2
        s.tool("Read", {"file_path": f"{s.cwd}/envs/staging/versions.tf"})
        yield 1.2
        s.tool_done('terraform {\n  required_version = "~> 1.7"\n}')
        yield 1.0
        s.finish(
            "Upgrade plan ready: 3 environments, 41 resources updated in place, no "
            "replacements. Details in UPGRADE.md."
        )
        yield 10
        s.prompt("apply it to staging")
        yield 1.2
        s.stream("I'll apply the plan to staging. First I'll check the state lock and")
        yield 2.5
        s.interrupt()  # Esc
        yield 9


def script_lifecycle(s: SimSession) -> Iterator[float]:
    """docs-site: an Esc, a quick turn, an exit and a fresh start, and a /clear."""
    s.ensure_started()
    yield 0.8
    while True:
        s.prompt("why is the search index stale?")
        yield 1.0
        s.stream("The index is rebuilt by the `docs:index` job, which last ran")
        yield 2.2
        s.interrupt()  # Esc
        yield 3.0
        s.prompt("fix the broken links in the changelog")
        yield 0.8
        s.tool("Grep", {"pattern": r"\]\(https?://", "path": "CHANGELOG.md",
                        "output_mode": "content"})  # fmt: skip
        yield 1.2
        s.tool_done("CHANGELOG.md:12: [docs](https://old.example.dev/guide)\n…")
        yield 0.6
        s.tool("Edit", {"file_path": f"{s.cwd}/CHANGELOG.md", "old_string": "old.example.dev",
                        "new_string": "docs.example.dev"})  # fmt: skip
        yield 1.0
        s.tool_done("The file CHANGELOG.md has been updated successfully.")
        yield 0.8
        s.finish("Fixed 4 broken links in CHANGELOG.md (two moved guide pages, two dead PR links).")
        yield 5.0
        s.end("prompt_input_exit")  # the user quit claude …
        yield 4.0
        s.start()  # … and started it again in the same pane: a new session
        yield 5.0
        s.prompt("rebuild the search index")
        yield 0.8
        s.tool("Bash", {"command": "npm run docs:index", "description": "Rebuild the index"})
        yield 3.0
        s.tool_done("indexed 214 pages in 2.7s")
        yield 0.6
        s.finish("Rebuilt the search index: 214 pages, including the 12 added this week.")
        yield 10
        s.end("clear")  # /clear: a new session id in the same process and pane
        s.start("clear")
        yield 6


#: ui-kit's question (AskUserQuestion's tool input, as the model sends it).
COLOUR_QUESTION = {
    "questions": [
        {
            "question": "Which colour should the badge use?",
            "header": "Colour",
            "multiSelect": False,
            "options": [
                {"label": "Purple", "description": "The brand colour"},
                {"label": "Amber", "description": "Stands out on dark themes"},
            ],
        }
    ]
}

#: release-notes' plan (ExitPlanMode's tool input in plan mode).
RELEASE_PLAN = (
    "1. Add docs/releases.md with one section per version.\n"
    "2. Generate it from CHANGELOG.md in `make docs`.\n"
    "3. Link it from the README."
)

#: How long a question or a plan waits for the user before the script answers it itself.
WAIT_FOR_USER_S = 45.0


def _take(s: SimSession, name: str) -> str | None:
    """What the user answered in the pane (the simulated CLI keeps it), once."""
    value = getattr(s, name, None)
    if hasattr(s, name):
        setattr(s, name, None)
    return value if isinstance(value, str) else None


def script_question(s: SimSession) -> Iterator[float]:
    """ui-kit: asks a question (AskUserQuestion); the answer (an option, or Other's text) shapes
    the rest of the turn. Nobody answers: it picks Purple after a while."""
    src = f"{s.cwd}/src/header.tsx"
    s.ensure_started()
    yield 3.0
    while True:
        s.prompt("add a status badge to the header")
        yield 1.0
        s.say("I need one decision first.")
        s.tool("AskUserQuestion", COLOUR_QUESTION)
        yield 0.3
        s.ask()
        yield WAIT_FOR_USER_S
        colour = _take(s, "chosen") or "Purple"
        s.tool_done(
            'User has answered your questions: "Which colour should the badge use?"='
            f'"{colour}". You can now continue with the user\'s answers in mind.'
        )
        yield 1.0
        s.tool(
            "Edit",
            {"file_path": src, "old_string": "<Title />", "new_string": "<Title /><Badge />"},
        )
        yield 1.5
        s.tool_done(f"The file {src} has been updated successfully.")
        yield 1.0
        s.finish(f"The header shows the status badge, in {colour}.")
        yield 25.0


def script_plan(s: SimSession) -> Iterator[float]:
    """release-notes: plan mode; offers a plan (ExitPlanMode): Approve runs it, Keep planning
    with feedback makes a new plan that takes it in. Nobody answers: it goes on as approved."""
    s.ensure_started()
    yield 6.0
    while True:
        s.prompt("plan a release notes page")
        yield 1.0
        s.say("Here is my plan.")
        plan = RELEASE_PLAN
        while True:
            s.tool("ExitPlanMode", {"plan": plan})
            yield 0.3
            s.ask()
            yield WAIT_FOR_USER_S
            feedback = _take(s, "feedback")
            if feedback is None:
                break
            s.tool_done(
                "The user doesn't want to proceed with this tool use. The tool use was rejected. "
                f"The user said: {feedback}",
                is_error=True,
            )
            yield 1.5
            s.say("Updated the plan with your feedback.")
            plan = f"{RELEASE_PLAN}\n4. {feedback}"
        s.tool_done("User has approved your plan. You can now start coding.")
        yield 1.0
        s.tool("Write", {"file_path": f"{s.cwd}/docs/releases.md", "content": "# Releases\n"})
        yield 1.5
        s.tool_done(f"File created successfully at: {s.cwd}/docs/releases.md")
        yield 1.0
        s.finish("docs/releases.md is in place and generated by `make docs`, as planned.")
        yield 25.0


#: The scripts by name (a session's process is told which one to run by its name).


def user_turn(s: SimSession, text: str) -> Iterator[float]:
    """A prompt someone typed into the pane: a short scripted answer, then review."""
    s.prompt(text)
    yield 1.0
    s.say("Let me look at the project first.")
    s.tool("Read", {"file_path": f"{s.cwd}/README.md"})
    yield 0.8
    s.tool_done(f"# {Path(s.cwd).name}\n\nA project of the pmux-widget demo.")
    yield 1.0
    s.finish(
        f"Done: “{text[:80]}”. (This is a scripted session of the pmux-widget demo: it "
        "answers every prompt with this note.)"
    )
    yield 10.0


SCRIPTS: dict[str, Script] = {
    script.__name__: script
    for script in (
        script_tests,
        script_subagents,
        script_errors,
        script_compact,
        script_lifecycle,
        script_question,
        script_plan,
    )
}
