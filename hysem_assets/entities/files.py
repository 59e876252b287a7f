"""The files ``hysem entities tag`` and ``relate`` read and write: JSON Lines or CoNLL in, JSON Lines out.

Tagging reads either text documents (JSON Lines with ``id`` and ``text``) or a CoNLL file
(first column the token, a blank line between sentences, ``-DOCSTART-`` between documents,
other columns ignored), told apart by the first line that is not blank. Text gives one line
per document with its words, tags and entities (character offsets); CoNLL gives one line per
sentence, in the file's order. Relating reads marked sentences and writes each back with its
``label``; a line that cannot be read is named and written with no label, so output lines
stay in step with input lines.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TextIO

from hysem_assets.entities.corpus import conll_sentences
from hysem_assets.entities.tagger import EntityModel, MarkersMissing, keep_types


def _records(path: Path) -> Iterator[tuple[int, dict]]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not a JSON object ({error.msg}); one JSON object a line") from None
            if not isinstance(record, dict):
                raise ValueError(f"{path}:{number}: not a JSON object; one JSON object a line")
            yield number, record


def is_json_lines(path: Path) -> bool:
    """Whether ``path``'s first line that is not blank opens a JSON object (else it is read as CoNLL)."""
    with path.open(encoding="utf-8") as handle:
        return next((line.lstrip().startswith("{") for line in handle if line.strip()), False)


def tag_file(
    model: EntityModel, path: Path, out: TextIO, types: Sequence[str], say: Callable[[str], None]
) -> tuple[int, int]:
    """Tag ``path`` into ``out``; returns (lines written, entities found). ``types`` keeps entities of those types."""
    written = found = 0
    if is_json_lines(path):
        for number, record in _records(path):
            text = record.get("text")
            if not isinstance(text, str):
                raise ValueError(f"{path}:{number}: no 'text' string; each line needs 'id' and 'text'")
            tagged = model.tag(text)
            tags = keep_types(tagged.tags, types)
            entities = [asdict(e) for e in tagged.entities(text) if e.type in types]
            if tagged.truncated:
                say(f"{path}:{number}: document {record.get('id')!r} read in its first {tagged.windows} windows only")
            line = {"id": record.get("id"), "tokens": list(tagged.words), "tags": tags, "entities": entities}
            out.write(json.dumps(line | {"windows": tagged.windows, "truncated": tagged.truncated}) + "\n")
            written, found = written + 1, found + len(entities)
    else:
        sentences = list(conll_sentences(path.read_text(encoding="utf-8").splitlines()))
        tags, _, _ = model.tag_sentences([s.words for s in sentences], [s.document for s in sentences])
        for sentence, sentence_tags in zip(sentences, tags, strict=True):
            kept = keep_types(sentence_tags, types)
            out.write(json.dumps({"tokens": list(sentence.words), "tags": kept}) + "\n")
            written, found = written + 1, found + sum(tag.startswith("B-") for tag in kept)
    return written, found


def relate_file(model: EntityModel, path: Path, out: TextIO, say: Callable[[str], None]) -> tuple[int, int]:
    """Label each marked sentence of ``path`` into ``out``; returns (lines labelled, lines refused)."""
    labelled = refused = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            text = record["text"]
            label, probability = model.relate(text)
        except (json.JSONDecodeError, KeyError, TypeError, MarkersMissing) as error:
            reason = str(error) if isinstance(error, MarkersMissing) else "not a JSON object with a 'text' string"
            say(f"{path}:{number}: {reason}")
            out.write(json.dumps({"line": number, "label": None, "error": reason}) + "\n")
            refused += 1
            continue
        out.write(json.dumps(record | {"label": label, "probability": round(probability, 4)}) + "\n")
        labelled += 1
    return labelled, refused
