"""Generate realistic Claude Code transcripts (JSONL, 2.1.197 record shapes) of any size.

Used by the transcript benchmark (P5, P6): the files are made by code into a temp dir, never
committed. The generator also returns the true token totals (deduplicated per API response,
output = max over the response's lines), computed by construction, so a benchmark can check
that the scanner it times is also right.

What "realistic" means here (shapes and proportions seen in real sessions):

* turns of a typed prompt, then 1–12 tool cycles, then a final answer; every API response is
  split over one line per content block (thinking with a signature, text, tool_use), with the
  partial ``output_tokens`` / null ``stop_reason`` on early lines and final values on later ones;
* tool results as their own user records, with ``toolUseResult`` repeating the output (a Read
  result carries the file twice, numbered and raw), sizes from 100 bytes to tens of KB;
* bookkeeping lines in between: ``file-history-snapshot``, ``system``/``turn_duration``,
  ``attachment``, ``ai-title``, ``last-prompt``; now and then an interrupt marker, an API-error
  synthetic record, a compaction (boundary + summary).
"""

from __future__ import annotations

import base64
import json
import random
import uuid as uuidlib
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["GenResult", "assistant_text_line", "generate"]

_SID = "4c1f9e2a-7b3d-4e5f-8a6b-9c0d1e2f3a4b"
_CWD = "/home/dev/projects/orbit-service"
_MODEL = "claude-sonnet-4-5-20250929"
_TAIL = (
    f',"userType":"external","entrypoint":"cli","cwd":"{_CWD}","sessionId":"{_SID}",'
    '"version":"2.1.197","gitBranch":"main"}'
)
_PROSE = (
    "the service retries failed payment calls with a fixed delay and we should move to "
    "exponential backoff so that bursts of timeouts do not hammer the upstream gateway "
    "while keeping the total wait bounded; check tests config handler cursor pagination "
    "token expiry middleware parser cache invalidation schema migration rollout flag "
    "metrics dashboard latency p99 budget queue consumer worker lease heartbeat "
    "café naïve résumé 日本語 テスト ✓ → ★"
)
_WORDS = _PROSE.split()


def _enc(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


@dataclass
class GenResult:
    """What was generated: size, line count and the true deduplicated token totals."""

    path: Path
    bytes: int = 0
    lines: int = 0
    responses: int = 0
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_creation: int = 0
    interrupts: int = 0
    compactions: int = 0
    session_id: str = _SID
    extra: dict[str, int] = field(default_factory=dict)

    def tokens(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cache_read": self.cache_read,
            "cache_creation": self.cache_creation,
        }


class _Writer:
    """Builds lines from pre-encoded pieces (json.dumps per line would dominate the time)."""

    def __init__(self, rng: random.Random, result: GenResult, layout: str = "id-first") -> None:
        self.rng = rng
        self.layout = layout
        self.result = result
        self.parent = "null"
        self.ms = 1_782_810_845_000
        self.buf: list[str] = []
        self.buf_len = 0
        self.prompt_id = str(uuidlib.UUID(int=rng.getrandbits(128), version=4))
        self.files = [self._code_file(rng.choice((800, 3000, 9000, 24000))) for _ in range(48)]
        self.file_paths = [
            f"{_CWD}/{rng.choice(('api', 'core', 'workers', 'tests'))}/{w}_{i}.py"
            for i, w in enumerate(rng.choices(_WORDS[:40], k=48))
        ]
        self.outputs = [self._prose(rng.randint(2, 120), sep="\n") for _ in range(64)]
        self.signatures = [
            base64.b64encode(rng.randbytes(rng.randint(300, 1200))).decode() for _ in range(32)
        ]
        self.thoughts = [self._prose(rng.randint(20, 300)) for _ in range(64)]
        self.texts = [self._prose(rng.randint(8, 120)) for _ in range(96)]
        self.prompts = [self._prose(rng.randint(6, 60)) for _ in range(64)]

    # -- content pools -----------------------------------------------------------------
    def _prose(self, n: int, sep: str = " ") -> str:
        rng = self.rng
        words = rng.choices(_WORDS, k=n)
        if sep == "\n":
            return "\n".join(" ".join(words[i : i + 8]) for i in range(0, n, 8))
        return " ".join(words).capitalize() + "."

    def _code_file(self, size: int) -> str:
        rng = self.rng
        lines: list[str] = []
        total = 0
        while total < size:
            indent = "    " * rng.randint(0, 3)
            line = indent + " ".join(rng.choices(_WORDS[:60], k=rng.randint(2, 9)))
            if rng.random() < 0.3:
                line += f'  # "{rng.choice(_WORDS)}"\t\\n'
            lines.append(line)
            total += len(line) + 1
        return "\n".join(lines)

    # -- ids and time --------------------------------------------------------------------
    def _uuid(self) -> str:
        return str(uuidlib.UUID(int=self.rng.getrandbits(128), version=4))

    def _rand_id(self, prefix: str, n: int = 24) -> str:
        alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789"
        return prefix + "".join(self.rng.choices(alphabet, k=n))

    def _ts(self, step_ms: int) -> str:
        self.ms += step_ms
        secs, ms = divmod(self.ms, 1000)
        import time

        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{ms:03d}Z"

    # -- output --------------------------------------------------------------------------
    def emit(self, line: str) -> None:
        self.buf.append(line)
        self.buf_len += len(line) + 1
        self.result.lines += 1

    def flush(self, fh) -> None:  # type: ignore[no-untyped-def]
        data = ("\n".join(self.buf) + "\n").encode()
        fh.write(data)
        self.result.bytes += len(data)
        self.buf.clear()
        self.buf_len = 0

    # -- records -------------------------------------------------------------------------
    def prompt(self, text: str) -> None:
        uid = self._uuid()
        self.prompt_id = self._uuid()
        self.emit(
            f'{{"parentUuid":{self.parent},"isSidechain":false,"promptId":"{self.prompt_id}",'
            f'"type":"user","message":{{"role":"user","content":{_enc(text)}}},"uuid":"{uid}",'
            f'"timestamp":"{self._ts(2000)}","permissionMode":"default",'
            '"origin":{"kind":"human"},"promptSource":"typed"' + _TAIL
        )
        self.parent = f'"{uid}"'
        if self.rng.random() < 0.3:  # the CLI attaches listings/reminders to some prompts
            uid = self._uuid()
            self.emit(
                f'{{"parentUuid":{self.parent},"isSidechain":false,"attachment":{{"type":'
                f'"skill_listing","content":{_enc(self.rng.choice(self.texts))}}},'
                f'"type":"attachment","uuid":"{uid}","timestamp":"{self._ts(3)}"' + _TAIL
            )
            self.parent = f'"{uid}"'

    def user_blocks(self, content: str, extra: str = "") -> None:
        uid = self._uuid()
        self.emit(
            f'{{"parentUuid":{self.parent},"isSidechain":false,"promptId":"{self.prompt_id}",'
            f'"type":"user","message":{{"role":"user","content":{content}}},"uuid":"{uid}",'
            f'"timestamp":"{self._ts(300)}"{extra}' + _TAIL
        )
        self.parent = f'"{uid}"'

    def response(self, blocks: list[str], final_stop: str) -> None:
        """One API response, one line per block, growing output like the real CLI."""
        rng = self.rng
        r = self.result
        mid = self._rand_id("msg_01")
        rid = self._rand_id("req_011C")
        inp = rng.randint(1, 12)
        cc = rng.choice((0, 0, rng.randint(100, 6000)))
        cr = rng.randint(8000, 150000)
        final = rng.randint(20, 900)
        partial = rng.randint(1, 20)
        flushed_early = rng.randint(0, len(blocks) - 1)  # lines before message_delta
        for i, block in enumerate(blocks):
            early = i < flushed_early
            out, stop = (partial, "null") if early else (final, f'"{final_stop}"')
            uid = self._uuid()
            if self.layout == "id-first":  # what 2.1.197 wrote in our recordings
                message = (
                    f'{{"id":"{mid}","type":"message","role":"assistant","model":"{_MODEL}",'
                    f'"content":[{block}],"stop_reason":{stop},"stop_sequence":null,'
                    f'"usage":{{"input_tokens":{inp},"cache_creation_input_tokens":{cc},'
                    f'"cache_read_input_tokens":{cr},"output_tokens":{out},"server_tool_use":'
                    f'{{"web_search_requests":0,"web_fetch_requests":0}},"service_tier":'
                    f'"standard","cache_creation":{{"ephemeral_1h_input_tokens":0,'
                    f'"ephemeral_5m_input_tokens":{cc}}},"inference_geo":"","iterations":[],'
                    f'"speed":"standard"}},"stop_details":null}}'
                )
            else:  # the shape of claude-code-facts.md's fixtures
                message = (
                    f'{{"model":"{_MODEL}","id":"{mid}","type":"message","role":"assistant",'
                    f'"content":[{block}],"stop_reason":{stop},"stop_sequence":null,'
                    f'"usage":{{"input_tokens":{inp},"cache_creation_input_tokens":{cc},'
                    f'"cache_read_input_tokens":{cr},"cache_creation":'
                    f'{{"ephemeral_5m_input_tokens":{cc},"ephemeral_1h_input_tokens":0}},'
                    f'"output_tokens":{out},"service_tier":"standard"}}}}'
                )
            self.emit(
                f'{{"parentUuid":{self.parent},"isSidechain":false,"message":{message},'
                f'"requestId":"{rid}","type":"assistant","uuid":"{uid}",'
                f'"timestamp":"{self._ts(rng.randint(200, 3000))}"' + _TAIL
            )
            self.parent = f'"{uid}"'
        r.responses += 1
        r.input += inp
        r.cache_creation += cc
        r.cache_read += cr
        r.output += final if flushed_early < len(blocks) else partial

    def tool_call(self) -> tuple[str, str, str]:
        """A tool_use block and its (result content, toolUseResult) JSON pieces."""
        rng = self.rng
        tid = self._rand_id("toolu_01")
        kind = rng.random()
        if kind < 0.35:
            i = rng.randrange(len(self.files))
            body = self.files[i]
            numbered = "\n".join(f"{n:>6}\t{ln}" for n, ln in enumerate(body.split("\n"), 1))
            inp = f'{{"file_path":{_enc(self.file_paths[i])}}}'
            block = f'{{"type":"tool_use","id":"{tid}","name":"Read","input":{inp}}}'
            n = body.count("\n") + 1
            tur = (
                f',"toolUseResult":{{"type":"text","file":{{"filePath":'
                f'{_enc(self.file_paths[i])},"content":{_enc(body)},"numLines":'
                f'{n},"startLine":1,"totalLines":{n}}}}}'
            )
            return (
                block,
                f'[{{"tool_use_id":"{tid}","type":"tool_result","content":{_enc(numbered)}}}]',
                tur,
            )
        if kind < 0.7:
            out = rng.choice(self.outputs)
            cmd = " ".join(rng.choices(_WORDS[:30], k=rng.randint(2, 8)))
            inp = f'{{"command":{_enc("pytest -q " + cmd)},"description":{_enc(cmd[:40])}}}'
            block = f'{{"type":"tool_use","id":"{tid}","name":"Bash","input":{inp}}}'
            tur = (
                f',"toolUseResult":{{"stdout":{_enc(out)},"stderr":"","interrupted":false,'
                f'"isImage":false}}'
            )
            return (
                block,
                f'[{{"tool_use_id":"{tid}","type":"tool_result","content":{_enc(out)}}}]',
                tur,
            )
        i = rng.randrange(len(self.files))
        body = self.files[i]
        cut = rng.randint(0, max(0, len(body) - 600))
        old, new = body[cut : cut + rng.randint(50, 600)], rng.choice(self.texts)
        inp = (
            f'{{"file_path":{_enc(self.file_paths[i])},"old_string":{_enc(old)},'
            f'"new_string":{_enc(new)}}}'
        )
        block = f'{{"type":"tool_use","id":"{tid}","name":"Edit","input":{inp}}}'
        msg = f"The file {self.file_paths[i]} has been updated successfully."
        tur = (
            f',"toolUseResult":{{"filePath":{_enc(self.file_paths[i])},"oldString":{_enc(old)},'
            f'"newString":{_enc(new)},"originalFile":null,"structuredPatch":[],'
            f'"userModified":false,"replaceAll":false}}'
        )
        return block, f'[{{"tool_use_id":"{tid}","type":"tool_result","content":{_enc(msg)}}}]', tur

    def thinking(self) -> str:
        return (
            f'{{"type":"thinking","thinking":{_enc(self.rng.choice(self.thoughts))},'
            f'"signature":"{self.rng.choice(self.signatures)}"}}'
        )

    def text(self, text: str | None = None) -> str:
        return f'{{"type":"text","text":{_enc(text or self.rng.choice(self.texts))}}}'

    def bookkeeping(self) -> None:
        rng = self.rng
        roll = rng.random()
        if roll < 0.4:
            mid = self._uuid()
            self.emit(
                f'{{"type":"file-history-snapshot","messageId":"{mid}","snapshot":{{"messageId":'
                f'"{mid}","trackedFileBackups":{{}},"timestamp":"{self._ts(1)}"}},'
                '"isSnapshotUpdate":false}'
            )
        elif roll < 0.7:
            uid = self._uuid()
            self.emit(
                f'{{"parentUuid":{self.parent},"isSidechain":false,"type":"system",'
                f'"subtype":"turn_duration","durationMs":{rng.randint(900, 90000)},'
                f'"isMeta":false,"timestamp":"{self._ts(5)}","uuid":"{uid}"' + _TAIL
            )
        elif roll < 0.85:
            self.emit(
                f'{{"type":"ai-title","aiTitle":{_enc(rng.choice(self.texts)[:50])},'
                f'"sessionId":"{_SID}"}}'
            )
        else:
            self.emit(
                f'{{"type":"last-prompt","lastPrompt":{_enc(rng.choice(self.prompts))},'
                f'"sessionId":"{_SID}"}}'
            )

    def turn(self) -> None:
        rng = self.rng
        r = self.result
        self.prompt(rng.choice(self.prompts))
        if rng.random() < 0.5:
            self.bookkeeping()
        for _ in range(rng.randint(1, 12)):
            blocks: list[str] = []
            if rng.random() < 0.4:
                blocks.append(self.thinking())
            if rng.random() < 0.6:
                blocks.append(self.text())
            calls = [self.tool_call() for _ in range(2 if rng.random() < 0.15 else 1)]
            blocks.extend(c[0] for c in calls)
            self.response(blocks, "tool_use")
            if rng.random() < 0.01:  # Esc while the tool runs
                for _block, _content, _tur in calls:
                    tid = _block.split('"id":"', 1)[1].split('"', 1)[0]
                    self.user_blocks(
                        f'[{{"tool_use_id":"{tid}","type":"tool_result","content":"The user '
                        "doesn't want to take this action right now. STOP what you are doing "
                        'and wait for the user to tell you how to proceed.","is_error":true}]'
                    )
                self.user_blocks(
                    '[{"type":"text","text":"[Request interrupted by user for tool use]"}]'
                )
                r.interrupts += 1
                return
            for _block, content, tur in calls:
                self.user_blocks(content, tur)
        if rng.random() < 0.005:  # an API error instead of an answer
            uid = self._uuid()
            self.emit(
                f'{{"parentUuid":{self.parent},"isSidechain":false,"type":"assistant",'
                f'"uuid":"{uid}","timestamp":"{self._ts(900)}","message":{{"id":"{self._uuid()}",'
                f'"container":null,"model":"<synthetic>","role":"assistant","stop_reason":'
                f'"stop_sequence","stop_sequence":"","type":"message","usage":{{"input_tokens":0,'
                f'"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},'
                f'"content":[{{"type":"text","text":"API Error: 529 Overloaded"}}]}},'
                f'"isApiErrorMessage":true,"error":"overloaded"' + _TAIL
            )
            return
        blocks = [self.thinking()] if rng.random() < 0.3 else []
        blocks.append(self.text())
        self.response(blocks, "end_turn")
        self.bookkeeping()

    def compaction(self) -> None:
        uid = self._uuid()
        self.emit(
            f'{{"parentUuid":null,"logicalParentUuid":{self.parent},"isSidechain":false,'
            f'"type":"system","subtype":"compact_boundary","content":"Conversation compacted",'
            f'"isMeta":false,"timestamp":"{self._ts(40000)}","uuid":"{uid}","level":"info",'
            '"compactMetadata":{"trigger":"auto","preTokens":167000}' + _TAIL
        )
        self.parent = f'"{uid}"'
        summary = (
            "This session is being continued from a previous conversation that ran out of "
            "context. " + self._prose(400)
        )
        uid2 = self._uuid()
        self.emit(
            f'{{"parentUuid":{self.parent},"isSidechain":false,"type":"user","message":'
            f'{{"role":"user","content":{_enc(summary)}}},"isVisibleInTranscriptOnly":true,'
            f'"isCompactSummary":true,"uuid":"{uid2}","timestamp":"{self._ts(5)}"' + _TAIL
        )
        self.parent = f'"{uid2}"'
        self.result.compactions += 1


def generate(path: str | Path, size: int, seed: int = 7, layout: str = "id-first") -> GenResult:
    """Write a transcript of about ``size`` bytes (whole turns, ends cleanly) to ``path``.

    ``layout``: ``"id-first"`` (the assistant ``message`` as the 2.1.197 CLI wrote it in our
    recordings: id, type, role, model, …, usage with server_tool_use etc., stop_details) or
    ``"model-first"`` (the shape of the reference fixtures).
    """
    path = Path(path)
    rng = random.Random(seed)
    result = GenResult(path=path)
    writer = _Writer(rng, result, layout)
    with open(path, "wb") as fh:
        turns = 0
        while result.bytes + writer.buf_len < size:
            writer.turn()
            turns += 1
            if turns % 400 == 0:
                writer.compaction()
            if writer.buf_len > 4 << 20:
                writer.flush(fh)
        # end on a clean answer so the file's ending is "clean"
        writer.prompt("Summarize what changed.")
        writer.response([writer.text("All done: the retry helper now backs off.")], "end_turn")
        writer.flush(fh)
    return result


def assistant_text_line(text_size: int = 1500, seed: int = 1) -> bytes:
    """One main-thread assistant text line of about ``text_size + 700`` bytes (for P6)."""
    rng = random.Random(seed)
    writer = _Writer(rng, GenResult(path=Path("-")))
    writer.response([writer.text("x" * text_size)], "end_turn")
    return (writer.buf[-1] + "\n").encode()
