import os
import time
from pathlib import Path

from loader import tool

DYNAMIC = '''from loader import prompt


@prompt
def test_dynamic_prompt() -> str:
    """Version {version}: rewritten by test_trigger_prompt_change."""
    return "dynamic"
'''


@tool
def test_trigger_prompt_change() -> str:
    """Changes the prompt list the way a user would: saves a new version of a prompt file next to this one.

    The loader notices the file and every client hears ``prompts/list_changed``. The new
    version is written aside and renamed into place, as editors save, so the loader
    applies it at once.
    """
    target = Path(__file__).with_name("test_dynamic_prompt.py")
    aside = target.with_name(".test_dynamic_prompt.py.saving")
    aside.write_text(DYNAMIC.format(version=time.time_ns()), encoding="utf-8")
    os.replace(aside, target)
    return f"saved a new version of {target.name}"
