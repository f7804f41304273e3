"""Demo fleets: Claude Code sessions for ``make demo``, behind one small interface.

A *fleet* is anything with ``start()`` / ``stop()`` / ``describe()`` (:class:`Fleet`). The demo
(:mod:`pmux_widget.demo.launcher`) only talks to that interface, so the fleet is replaceable:

* :class:`~.scripted_fleet.ScriptedFleet` (the default; no Claude account, no network, no
  CLI): five scripted sessions, each a simulated Claude Code process in a window of a private
  tmux server, with an hour of backdated history (:mod:`.scripted_fleet`).
* :class:`~.real_fleet.RealFleet` (``--real``): real Claude Code CLIs in private tmux servers
  against the scripted model, driven by keystrokes, each script naming the states it shows,
  plus one undriven session for the notebook (:mod:`.real_fleet`).
"""

from __future__ import annotations

from typing import Protocol

from .real_fleet import RealFleet
from .scripted_fleet import ScriptedFleet
from .simulated import InstalledHooks, SimSession

__all__ = ["Fleet", "InstalledHooks", "RealFleet", "ScriptedFleet", "SimSession"]


class Fleet(Protocol):
    """What the demo runs. ``start()`` returns once the sessions are under way; ``stop()``
    ends them and every process the fleet started, and may be called twice."""

    kind: str

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def describe(self) -> list[str]: ...
