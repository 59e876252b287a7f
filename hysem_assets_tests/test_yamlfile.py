"""The safe YAML reader of config files: bounded aliases, file and line in every error."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hysem_assets.settings.profile import ProfileError, read_profile
from hysem_assets.settings.yamlfile import MAX_ALIAS_EXPANSION, ConfigFileError, read_yaml_mapping


def write(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "config.yaml"
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def test_ordinary_aliases_read_and_lines_are_found(tmp_path: Path):
    path = write(tmp_path, "base: &base {rate: 3}\nsources:\n  pubmed: *base\n  list:\n    - a\n    - b\n")
    document = read_yaml_mapping(path)
    assert document.data == {"base": {"rate": 3}, "sources": {"pubmed": {"rate": 3}, "list": ["a", "b"]}}
    assert document.line("sources", "list", 1) == 6 and document.where("sources", "list") == f"{path}:5"
    assert document.line("sources", "missing") is None and read_yaml_mapping(write(tmp_path, "")).data == {}


def test_a_billion_laughs_is_refused_quickly_naming_the_line(tmp_path: Path):
    levels = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    levels += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
    path = write(tmp_path, "\n".join(levels) + "\n")
    started = time.monotonic()
    with pytest.raises(
        ConfigFileError, match=rf"config.yaml:4:\d+: aliases expand to more than {MAX_ALIAS_EXPANSION:,}"
    ):
        read_yaml_mapping(path)
    assert time.monotonic() - started < 2


def test_a_recursive_alias_is_refused(tmp_path: Path):
    path = write(tmp_path, "loop: &loop [a, *loop]\nagain: *loop\n")
    with pytest.raises(ConfigFileError, match=r"config.yaml:1:17: alias \*loop refers to a value that contains it"):
        read_yaml_mapping(path)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"- a\n- b\n", r"config.yaml:1: the top level is a list; it must be a mapping of keys"),
        (b"just text\n", r"config.yaml:1: the top level is a str"),
        (b"a: 1\nb: \xe9t\xe9\n", r"config.yaml:2: not UTF-8 text \(byte 0xe9\); save the file as UTF-8"),
        (b"a: [1, 2\nb: 3\n", r"config.yaml:2:2: while parsing a flow sequence"),
        (b"a: !!python/object:os.system echo\n", r"config.yaml:1:4: could not determine a constructor"),
        (b"a: 1\n---\nb: 2\n", r"config.yaml:2:1: .*expected a single document"),
    ],
)
def test_unreadable_files_name_file_line_and_cause(tmp_path: Path, content: bytes, message: str):
    with pytest.raises(ConfigFileError, match=message) as caught:
        read_yaml_mapping(write(tmp_path, content))
    assert "\n" not in str(caught.value)


def test_profiles_are_read_the_same_way(tmp_path: Path):
    with pytest.raises(ProfileError, match=r"Profile .*config.yaml:1: the top level is a list"):
        read_profile(write(tmp_path, "- name: x\n"))
