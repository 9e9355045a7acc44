"""A tool file named like a real module (``math.py``, ``re.py``) never stands in for it, and every command says so."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
import warm_cli
from support import LineReader, cli_env, run_cli, write

SAMPLE_TOOLS = Path(__file__).resolve().parents[2] / "sample_tools"

_CLASHING_TOOL = """
from loader import tool

@tool
def {name}_tool(text: str) -> str:
    \"\"\"Echo a text.

    Args:
        text: The text.
    \"\"\"
    return text
"""


@pytest.mark.parametrize("name", ["math", "json"])
def test_new_refuses_a_name_of_the_standard_library_and_writes_nothing(tmp_path: Path, name: str) -> None:
    done = run_cli("new", name, "--force", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"'{name}' is also the standard-library module {name}" in done.stderr
    assert f"pick another name (e.g. {name}_tool)" in done.stderr
    assert not (tmp_path / "tools" / f"{name}.py").exists()


def test_new_refuses_the_name_of_an_installed_package(tmp_path: Path) -> None:
    done = run_cli("new", "pydantic", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "'pydantic' is also the installed module pydantic" in done.stderr


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_sibling_tools_get_the_real_modules_and_check_list_and_watch_name_the_files(
    tmp_path: Path, isolation: str
) -> None:
    # The reported fault: `new math` then a restart, and count_primes failed with "module 'math' has no
    # attribute 'ceil'"; a re.py made slugify and word_count fail (text_helpers imports re).
    tools = tmp_path / "tools"
    shutil.copytree(SAMPLE_TOOLS, tools)
    for name in ("math", "re", "json", "time", "random"):
        write(tools / f"{name}.py", _CLASHING_TOOL.format(name=name))

    primes = run_cli("call", "count_primes", "limit=100", "--isolation", isolation, cwd=tmp_path)
    assert primes.returncode == 0, primes.stdout + primes.stderr
    assert '"count": 25' in primes.stdout
    slug = run_cli("call", "slugify", "title=Hello World", "--isolation", isolation, cwd=tmp_path)
    assert slug.returncode == 0, slug.stdout + slug.stderr
    assert "hello-world" in slug.stdout
    own = run_cli("call", "math_tool", "text=hi", "--isolation", isolation, cwd=tmp_path)
    assert own.returncode == 0 and "hi" in own.stdout, (
        own.stdout + own.stderr
    )  # the file still serves its tool

    check = run_cli("check", "--json", "--isolation", isolation, cwd=tmp_path)
    assert check.returncode == 1, check.stdout
    named = {
        (Path(f["file"]).name, f["severity"])
        for f in json.loads(check.stdout)["findings"]
        if f["code"] == "module-name"
    }
    assert named == {(f"{n}.py", "error") for n in ("math", "re", "json", "time", "random")}

    listed = run_cli("list", "--isolation", isolation, cwd=tmp_path)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "warning: tools/math.py: 'math' is also the standard-library module math" in listed.stdout


def test_watch_warns_of_a_file_named_like_a_module_at_start_and_when_one_is_added(tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    write(tools / "random.py", _CLASHING_TOOL.format(name="random"))
    process = subprocess.Popen(
        warm_cli.command(["watch", "tools"], cli_env()),
        cwd=tmp_path,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out = LineReader(process.stdout)
        out.wait_for(
            r"warning tools/random\.py 'random' is also the standard-library module random: .*rename"
        )
        out.wait_for(r"^watching tools")
        write(tools / "json.py", _CLASHING_TOOL.format(name="json"))
        out.wait_for(
            r"added tools/json\.py json_tool warning: 'json' is also the standard-library module json"
        )
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_tools_folder_on_sys_path_does_not_make_its_files_real_modules(
    tmp_path: Path, isolation: str
) -> None:
    # sched: a standard-library module nothing imports before the tools do (a folder on PYTHONPATH
    # holding colorsys.py breaks Python itself, in rich, before any loader code runs).
    tools = tmp_path / "tools"
    write(tools / "sched.py", "SIBLING = True\n")
    write(
        tools / "plan.py",
        '''
        import sched

        from loader import tool


        @tool
        def plan() -> str:
            """Say which sched this is."""
            return f"{sched.__file__} {hasattr(sched, 'scheduler')}"
        ''',
    )
    done = run_cli("call", "plan", "--isolation", isolation, cwd=tmp_path, env={"PYTHONPATH": str(tools)})
    assert done.returncode == 0, done.stdout + done.stderr
    where, real = done.stdout.split()
    assert real == "True" and not where.startswith(str(tools)), done.stdout
