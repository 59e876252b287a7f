"""The command line's shape: thin commands in one package, one reader of profile files, one state folder
whatever the working directory, and output free of other libraries' deprecation notices."""

from __future__ import annotations

import ast
import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import click

from hysem_assets.cli import main
from hysem_assets.settings.environment import home_and_origin, project_root
from hysem_assets_tests.paths import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "hysem_assets"
#: A command parses, calls one domain function and prints: longer than this, the work belongs in its package.
LONGEST_COMMAND = 40
#: What reads a profile file; the one module that may name it is settings/profile.py.
PROFILE_READERS = {"load_profile", "read_profile", "profile_path", "bundled_profiles"}


def commands(group: click.Group, path: str = "hysem"):
    """Every command and group below ``group``, with the words that call it."""
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        yield f"{path} {name}", command
        if isinstance(command, click.Group):
            yield from commands(command, f"{path} {name}")


def test_the_commands_live_in_the_cli_package_and_each_is_short():
    assert not (PACKAGE / "cli.py").exists() and not (PACKAGE / "cli_errors.py").exists()
    found = list(commands(main))
    assert len(found) >= 19
    for words, command in found:
        callback = inspect.unwrap(command.callback)
        assert callback.__module__.startswith("hysem_assets.cli."), f"{words} is defined in {callback.__module__}"
        source = textwrap.dedent(inspect.getsource(callback))
        definition = next(node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef))
        length = definition.end_lineno - definition.lineno + 1
        assert length <= LONGEST_COMMAND, f"`{words}` is {length} lines long; move its work into its package"


def test_exactly_one_module_reads_profile_files():
    named_by = {}
    for module in PACKAGE.rglob("*.py"):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        names |= {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
        names |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        names |= {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        if used := names & PROFILE_READERS:
            named_by[module.relative_to(PACKAGE).as_posix()] = sorted(used)
    assert list(named_by) == ["settings/profile.py"], named_by


def test_the_state_folder_is_hysem_home_else_the_project_else_the_user_data_folder(tmp_path, monkeypatch):
    checkout, wheel = tmp_path / "checkout", tmp_path / "site-packages"
    (checkout / "hysem_assets").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text('[project]\nname = "hysem"\n', encoding="utf-8")
    (wheel / "hysem_assets").mkdir(parents=True)
    (wheel / "pyproject.toml").write_text('[project]\nname = "other"\n', encoding="utf-8")
    assert project_root(checkout / "hysem_assets") == checkout
    assert project_root(wheel / "hysem_assets") is None
    assert project_root() == PROJECT_ROOT  # this checkout, as `make install` installs it

    monkeypatch.setenv("HYSEM_HOME", str(tmp_path / "explicit"))
    assert home_and_origin() == (tmp_path / "explicit", "HYSEM_HOME")
    monkeypatch.delenv("HYSEM_HOME")
    assert home_and_origin()[0] == PROJECT_ROOT / ".hysem"


def test_without_hysem_home_every_folder_finds_the_projects_state(tmp_path):
    """Resolved from the checkout and from an unrelated folder, the state is the same (and nothing is made)."""
    env = {key: value for key, value in os.environ.items() if key != "HYSEM_HOME"}
    script = "from hysem_assets.settings.environment import home_and_origin; print(*home_and_origin(), sep='|')"
    seen = {
        subprocess.run(
            [sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, check=True
        ).stdout.strip()
        for cwd in (PROJECT_ROOT, tmp_path)
    }
    assert seen == {f"{PROJECT_ROOT / '.hysem'}|the project at {PROJECT_ROOT}"}
    assert not (tmp_path / ".hysem").exists()


def run_hysem(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``hysem`` as a user runs it, in a new process."""
    hysem = Path(sys.executable).with_name("hysem")
    return subprocess.run([str(hysem), *args], cwd=cwd, capture_output=True, text=True, timeout=600)


#: How Python shows a warning: ``path/to/module.py:74: PydanticDeprecatedSince20: message``.
WARNING_LINE = re.compile(r"^(?P<path>\S+\.py):\d+: \w+: ")


def third_party_notices(stderr: str) -> list[str]:
    """The warnings on ``stderr`` raised outside hysem's own code."""
    shown = (WARNING_LINE.match(line) for line in stderr.splitlines())
    return [found[0] for found in shown if found and "/hysem_assets/" not in found["path"]]


def test_a_command_shows_no_deprecation_notice_of_other_libraries(tmp_path):
    doctor = run_hysem("doctor", cwd=tmp_path)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "state" in doctor.stdout and "HYSEM_HOME" in doctor.stdout
    assert third_party_notices(doctor.stderr) == [], doctor.stderr
