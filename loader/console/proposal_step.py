"""How ``promote`` and ``withdraw`` end when the proposal may not take that step, or is not there."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from rich.text import Text

from ..authoring.area import ProposalError
from ..authoring.workflow import PromoteRefused
from .common import UsageError, stderr_console

__all__ = ["take_step"]

T = TypeVar("T")


def take_step(step: Callable[[], T], folder: Path) -> T | None:
    """What ``step`` returns; None when it was refused (said on stderr: the command exits 1).

    An unknown proposal, or a folder that cannot be written, is a usage error (exit 2).
    """
    try:
        return step()
    except PromoteRefused as exc:
        stderr_console().print(Text(f"refused: {exc}", style="bold red"), soft_wrap=True)
        return None
    except ProposalError as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:
        raise UsageError(f"cannot write into {folder}: {exc.strerror or exc}") from exc
