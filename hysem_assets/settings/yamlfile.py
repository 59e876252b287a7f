"""Read a YAML config file safely: bounded aliases, errors that name the file and line.

Config files are edited by hand and shared, so reading one must not run code, must not
hang on a file whose aliases expand without end (a "billion laughs" file expands nine
short lines into 10^9 values), and must say where a problem is. :func:`read_yaml_mapping`
uses PyYAML's safe loader with a budget on what aliases may expand to, decodes strictly
as UTF-8, insists on a mapping at the top, and keeps the node tree so a later validation
error can name the line of the entry it is about.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

#: Values that aliases may add to a document in total; a hand-written config uses a few dozen.
MAX_ALIAS_EXPANSION = 10_000


class ConfigFileError(ValueError):
    """A config file that cannot be read; the message names the file, the line and the cause."""


class _BoundedLoader(yaml.SafeLoader):
    """The safe loader, refusing documents whose aliases expand past :data:`MAX_ALIAS_EXPANSION`."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._sizes: dict[int, int] = {}
        self._open: set[str] = set()  # anchors whose values are being read
        self._expanded = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self._open:
                raise yaml.composer.ComposerError(
                    None, None, f"alias *{event.anchor} refers to a value that contains it", event.start_mark
                )
            node = self.anchors.get(event.anchor)
            if node is not None:
                self._expanded += self._size(node)
                if self._expanded > MAX_ALIAS_EXPANSION:
                    raise yaml.composer.ComposerError(
                        None,
                        None,
                        f"aliases expand to more than {MAX_ALIAS_EXPANSION:,} values; "
                        "write the values out instead of nesting aliases",
                        event.start_mark,
                    )
            return super().compose_node(parent, index)
        anchor = getattr(event, "anchor", None)
        if anchor is None:
            return super().compose_node(parent, index)
        self._open.add(anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self._open.discard(anchor)

    def _size(self, node: yaml.Node) -> int:
        """Values ``node`` stands for, counted once per place it appears (aliases included)."""
        key = id(node)
        if key not in self._sizes:
            if isinstance(node, yaml.SequenceNode):
                children = list(node.value)
            elif isinstance(node, yaml.MappingNode):
                children = [child for pair in node.value for child in pair]
            else:
                children = []
            self._sizes[key] = 1 + sum(self._size(child) for child in children)
        return self._sizes[key]


@dataclass(frozen=True)
class YamlMapping:
    """A config file's top-level mapping, with the line of any entry in it."""

    path: Path
    data: dict[str, Any]
    node: yaml.Node | None

    def line(self, *keys: str | int) -> int | None:
        """The 1-based line where the value at ``keys`` (mapping keys, list indexes) starts."""
        node = self.node
        for key in keys:
            if isinstance(node, yaml.MappingNode):
                node = next((value for name, value in node.value if name.value == key), None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
                node = node.value[key]
            else:
                return None
        return node.start_mark.line + 1 if node is not None else None

    def where(self, *keys: str | int) -> str:
        """``path:line`` of the value at ``keys``, or the path alone when it has no line."""
        line = self.line(*keys)
        return f"{self.path}:{line}" if line else str(self.path)


def read_yaml_mapping(path: Path, expected: str = "a mapping of keys") -> YamlMapping:
    """Parse ``path``, whose top level must be a mapping (``expected`` says what it should hold)."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigFileError(
            f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x}); save the file as UTF-8"
        ) from None
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        cause = "; ".join(" ".join(str(part).split()) for part in (exc.context, exc.problem) if part)
        raise ConfigFileError(f"{where}: {cause}") from None
    except yaml.YAMLError as exc:
        raise ConfigFileError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise ConfigFileError(f"{path}: values are nested too deeply to read") from None
    finally:
        loader.dispose()
    if data is None:
        return YamlMapping(path, {}, None)
    if not isinstance(data, dict):
        kind = "list" if isinstance(data, list) else type(data).__name__
        raise ConfigFileError(f"{path}:1: the top level is a {kind}; it must be {expected}")
    return YamlMapping(path, data, node)
