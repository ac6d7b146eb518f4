"""The semantic half of issue 21's item 2, as measured by bench/bench_answers.py (not shipped: it did not help).

The model is WordLlama's `l2_supercat` at 256 dimensions: a static token-embedding table (32,000 x 256, float16)
averaged over a text's tokens, so a question is embedded in well under a millisecond with numpy alone. Its
weights and tokenizer ship inside the `wordllama` wheel (0.4.0.post1) from PyPI; they are read from the installed
package with the hub turned off (HF_HUB_OFFLINE), never downloaded. `WordLlama.load` is not used because it
looks for the tokenizer in a folder the wheel does not have (`tokenizer/` against the shipped `tokenizers/`) and
then downloads it; the package's own `tokenizer_from_file` and `WordLlamaInference` are.

Fused with the lexical rankings by reciprocal rank it made every measured set worse (docs/architecture.md,
"Questions: lexical, semantic, fused"), so the bot does not depend on it. The bench uses it when wordllama is
installed (`pip install wordllama==0.4.0.post1`) and prints "(no passage vectors loaded)" otherwise.
"""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

MODEL = "wordllama/l2_supercat"
DIM = 256
EDITION_CODES = {"10e": 1, "11e": 2}
BATCH = 512


class Embedder:
    """The static embedding model: text -> unit vector."""

    name = MODEL
    dim = DIM

    def __init__(self, inference) -> None:  # noqa: ANN001 - wordllama.inference.WordLlamaInference
        self._inference = inference

    def embed(self, texts: list[str]) -> np.ndarray:
        """float32 rows of length 1 (a text with no known token gives a zero row)."""
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        rows = np.asarray(self._inference.embed(texts, norm=False, batch_size=BATCH), dtype=np.float32)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


@functools.cache
def load_model() -> Embedder | None:
    """The model from the installed wheel, once per process; None (and why, logged once) when it cannot load."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing here may reach a model hub
    try:
        import wordllama
        from safetensors import safe_open
        from wordllama.inference import WordLlamaInference
        from wordllama.tokenizers import tokenizer_from_file

        weights = Path(wordllama.__file__).parent / "weights" / f"l2_supercat_{DIM}.safetensors"
        with safe_open(str(weights), framework="np") as f:
            table = f.get_tensor("embedding.weight")
        if table.ndim != 2 or table.shape[1] != DIM:
            raise ValueError(f"unexpected weights shape {table.shape}")
        return Embedder(WordLlamaInference(table, tokenizer_from_file("l2_supercat_tokenizer_config.json")))
    except Exception as exc:  # noqa: BLE001 - any failure here only turns the semantic half off
        log.warning("semantic ranking is off (the %s model could not be loaded: %s); questions are answered "
                    "from the lexical ranking", MODEL, str(exc)[:200])
        return None


class PassageVectors:
    """Every passage's vector, searched by cosine similarity (a matrix-vector product)."""

    def __init__(self, embedder: Embedder, rowids: np.ndarray, editions: np.ndarray, matrix: np.ndarray) -> None:
        self.embedder = embedder
        self.rowids = rowids
        self.editions = editions
        self.matrix = matrix

    def search(self, text: str, *, limit: int = 60, edition: str | None = None) -> list[int]:
        """Passage rowids, most similar first."""
        if not len(self.rowids):
            return []
        query = self.embedder.embed([text])[0]
        if not query.any():
            return []
        scores = self.matrix @ query.astype(np.float16)
        if edition is not None:
            scores = np.where(self.editions == EDITION_CODES.get(edition, 0), scores, -2.0)
        limit = min(limit, len(scores))
        top = np.argpartition(-scores, limit - 1)[:limit]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [int(self.rowids[i]) for i in top if scores[i] > -2.0]


def build(rows: list[tuple[int, str, str, str]], embedder: Embedder) -> PassageVectors:
    """Embed every passage (rowid, edition, name, text), in memory."""
    rowids = np.array([r[0] for r in rows], dtype=np.int64)
    editions = np.array([EDITION_CODES.get(r[1], 0) for r in rows], dtype=np.uint8)
    matrix = embedder.embed([f"{r[2]}. {r[3]}" for r in rows]).astype(np.float16)
    return PassageVectors(embedder, rowids, editions, matrix)
