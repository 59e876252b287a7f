"""MkDocs hook: the profile reference, generated from the profile's pydantic models at build time.

The page ``reference/profile.md`` holds the marker ``<!-- profile-reference -->``; this hook
replaces it with one table per section of the profile, every key written out as a dotted
path (``assets.parsed_docs.ocr_engine``) with its type, default and description, so the page
lists every key a profile accepts and cannot fall behind the code.
"""

from __future__ import annotations

import json
import logging
import re
import types
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from hysem_assets.settings import profile as profile_module
from hysem_assets.settings.backends import SECTION_BACKENDS

MARKER = "<!-- profile-reference -->"
PAGE = "reference/profile.md"

log = logging.getLogger("mkdocs.hooks.profile_reference")


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _type_name(annotation: Any) -> str:
    """A type as a profile's author writes it: ``integer``, ``"native" or "standard"``, ``list of string``."""
    origin = get_origin(annotation)
    if origin is Literal:
        return " or ".join(json.dumps(value) for value in get_args(annotation))
    if origin in (Union, types.UnionType):
        return " or ".join(_type_name(arg) for arg in get_args(annotation))
    if origin is list:
        (item,) = get_args(annotation) or (Any,)
        return f"list of {_type_name(item)}"
    if origin is dict:
        key, value = get_args(annotation) or (str, Any)
        return "mapping" if value is Any else f"mapping of {_type_name(key)} to {_type_name(value)}"
    if annotation is type(None):
        return "null"
    if annotation is Any:
        return "any"
    if _is_model(annotation):
        return "section"
    names = {str: "string", int: "integer", float: "number", bool: "boolean"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _constraints(field: FieldInfo) -> str:
    """``gt``/``ge``/``lt``/``le`` bounds of a field, as ``≥ 1, ≤ 1``."""
    signs = {"gt": ">", "ge": "≥", "lt": "<", "le": "≤"}
    bounds = []
    for item in field.metadata:
        for attribute, sign in signs.items():
            value = getattr(item, attribute, None)
            if value is not None:
                bounds.append(f"{sign} {value}")
    return ", ".join(bounds)


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        value = field.default_factory()  # type: ignore[call-arg]
    elif field.default is PydanticUndefined:
        return "required"
    else:
        value = field.default
    if isinstance(value, BaseModel):
        return "(section)"
    return f"`{json.dumps(value)}`"


def _cell(text: str) -> str:
    """One table cell: one line, pipes escaped, angle brackets outside code spans written as entities."""
    parts = re.split(r"(`+[^`]*`+)", " ".join(text.split()))
    for index in range(0, len(parts), 2):
        parts[index] = parts[index].replace("<", "&lt;").replace(">", "&gt;")
    return "".join(parts).replace("|", "\\|")


def _rows(model: type[BaseModel], prefix: str, sections: list[tuple[str, type[BaseModel]]]) -> list[str]:
    """One table row per key of ``model``; nested models are queued in ``sections`` as their own tables."""
    rows = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        annotation = field.annotation
        kind = _type_name(annotation)
        if get_origin(annotation) is dict and _is_model(get_args(annotation)[1]):
            kind = "mapping of name to section"
        bounds = _constraints(field)
        if bounds:
            kind = f"{kind} ({bounds})"
        description = field.description or ""
        if _is_model(annotation):
            sections.append((key, annotation))
            description = f"{description} See [`{key}`](#{_anchor(key)}).".strip()
        elif get_origin(annotation) is dict and _is_model(get_args(annotation)[1]):
            source_key, section = get_args(annotation)
            placeholder = "<name>"
            if get_origin(source_key) is Literal:
                names = ", ".join(f"`{value}`" for value in get_args(source_key))
                description = f"{description} Keys: {names}."
            sections.append((f"{key}.{placeholder}", section))
            description = (
                f"{description} Each is a section, see [`{key}.{placeholder}`](#{_anchor(f'{key}.{placeholder}')})."
            )
        rows.append(f"| `{key}` | {_cell(kind)} | {_default(field)} | {_cell(description)} |")
    return rows


def _anchor(key: str) -> str:
    return "key-" + key.replace(".", "-").replace("_", "-").replace("<", "").replace(">", "")


def _table(
    heading: str, model: type[BaseModel], prefix: str, sections: list[tuple[str, type[BaseModel]]], note: str = ""
) -> list[str]:
    """A heading, the model's docstring (and ``note``), then one row per key; nested models join ``sections``."""
    return [
        heading,
        "",
        _cell(model.__doc__ or ""),
        *([note] if note else []),
        "",
        "| key | type | default | description |",
        "|---|---|---|---|",
        *_rows(model, prefix, sections),
        "",
    ]


def profile_reference() -> str:
    """Markdown tables of every key of the profile's root model, section by section."""
    sections: list[tuple[str, type[BaseModel]]] = []
    out = _table("## Top level", profile_module.Profile, "", sections)
    while sections:
        key, model = sections.pop(0)
        out += _table(f"## `{key}` {{#{_anchor(key)}}}", model, f"{key}.", sections)
    return "\n".join(out)


def _model_sections(model: type[BaseModel], prefix: str = "") -> dict[str, list[str]]:
    """Section kind -> the dotted profile keys whose value is checked as a model backend of that kind."""
    found: dict[str, list[str]] = {}
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        for item in field.metadata:
            if isinstance(getattr(item, "func", None), profile_module.BackendSection):
                found.setdefault(item.func.kind, []).append(key)
        if _is_model(field.annotation):
            for kind, keys in _model_sections(field.annotation, f"{key}.").items():
                found.setdefault(kind, []).extend(keys)
    return found


def backends_reference() -> str:
    """One table per backend a model section can name, with the sections that accept it."""
    keys_of = _model_sections(profile_module.Profile)
    accepted: dict[type[BaseModel], list[str]] = {}
    for kind, models in SECTION_BACKENDS.items():
        for model in models:
            accepted.setdefault(model, []).extend(keys_of.get(kind, []))
    out = ["## Model backends", ""]
    nested: dict[str, type[BaseModel]] = {}
    for model, keys in accepted.items():
        (name,) = get_args(model.model_fields["backend"].annotation)
        heading = f"### `backend: {name}` ({model.__name__}) {{#{_anchor('backend.' + model.__name__)}}}"
        sections: list[tuple[str, type[BaseModel]]] = []
        out += _table(heading, model, "", sections, note=f"Accepted by {', '.join(f'`{k}`' for k in keys)}.")
        nested.update(sections)
    for key, model in nested.items():
        out += _table(f"### `{key}` {{#{_anchor(key)}}}", model, f"{key}.", [])
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        log.warning("%s: the marker %s is missing, so the profile reference is not generated", PAGE, MARKER)
        return markdown
    log.info("profile reference generated from %s.Profile", profile_module.__name__)
    return markdown.replace(MARKER, profile_reference() + "\n" + backends_reference())
