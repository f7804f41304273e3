"""pmux-widget: live status of every Claude Code session on this machine, inside Jupyter."""

from ._version import __version__
from .model import Session, State

__all__ = ["Session", "State", "__version__"]
