"""``tf.contrib.learn.preprocessing``: `VocabularyProcessor`, the text-to-ids mapper of
TF1's text-classification tutorials: documents are tokenized (words, apostrophes and
dashes; runs of capitals and CamelCase split), each token gets an id in order of first
appearance (0 is ``<UNK>`` and padding), and each document becomes an int64 row of
`max_document_length` ids.

`save` writes JSON (TF1 pickled the object; flowgraph files never hold pickles), so a
custom `tokenizer_fn` is not saved: pass it again to `restore`.

Example
-------
>>> import numpy as np
>>> vp = VocabularyProcessor(max_document_length=4)
>>> np.array(list(vp.fit_transform(["the cat sat", "the dog"]))).tolist()
[[1, 2, 3, 0], [1, 4, 0, 0]]
>>> list(vp.reverse([[1, 4, 0, 0]])), len(vp.vocabulary_)
(['the dog <UNK> <UNK>'], 5)
"""

from __future__ import annotations

import json
import os
import re
import tempfile

import numpy as np

__all__ = ["CategoricalVocabulary", "VocabularyProcessor", "tokenizer"]

TOKENIZER_RE = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z][a-z]+(?=[A-Z])|['\w\-]+", re.UNICODE)


def tokenizer(iterator):
    """Yield each document's list of tokens."""
    for document in iterator:
        yield TOKENIZER_RE.findall(document)


class CategoricalVocabulary:
    """Ids for categories in order of first appearance; id 0 is `unknown_token`, which a
    frozen vocabulary gives for new categories."""

    def __init__(self, unknown_token: str = "<UNK>", support_reverse: bool = True) -> None:
        self._unknown_token = unknown_token
        self._support_reverse = support_reverse
        self._mapping = {unknown_token: 0}
        self._reverse_mapping = [unknown_token]
        self._freq: dict = {}
        self._freeze = False

    def __len__(self) -> int:
        return len(self._mapping)

    def freeze(self, freeze: bool = True) -> None:
        """Stop (or restart) adding categories."""
        self._freeze = freeze

    def get(self, category) -> int:
        """The id of `category`, added when new unless frozen (then 0)."""
        found = self._mapping.get(category)
        if found is not None:
            return found
        if self._freeze:
            return 0
        new_id = len(self._mapping)
        self._mapping[category] = new_id
        self._reverse_mapping.append(category)
        return new_id

    def add(self, category, count: int = 1) -> None:
        """Count `count` occurrences of `category` (added if new)."""
        if self.get(category) > 0:
            self._freq[category] = self._freq.get(category, 0) + count

    def trim(self, min_frequency: int, max_frequency: int = -1) -> None:
        """Keep the categories seen more than `min_frequency` times (and fewer than
        `max_frequency` when > 0), renumbered by decreasing count, ties alphabetically."""
        ranked = sorted(self._freq.items(), key=lambda kv: (-kv[1], isinstance(kv[0], str),
                                                            kv[0]))
        self._mapping = {self._unknown_token: 0}
        self._reverse_mapping = [self._unknown_token]
        kept = {}
        for category, count in ranked:
            if max_frequency > 0 and count >= max_frequency:
                continue
            if count <= min_frequency:
                break
            self._mapping[category] = len(self._mapping)
            self._reverse_mapping.append(category)
            kept[category] = count
        self._freq = kept

    def reverse(self, class_id: int):
        """The category of `class_id`."""
        if not self._support_reverse:
            raise ValueError("This vocabulary wasn't initialized with support_reverse to "
                             "support reverse() function.")
        return self._reverse_mapping[class_id]


class VocabularyProcessor:
    """Documents to rows of token ids; see the module docstring."""

    def __init__(self, max_document_length: int, min_frequency: int = 0, vocabulary=None,
                 tokenizer_fn=None) -> None:
        self.max_document_length = max_document_length
        self.min_frequency = min_frequency
        self.vocabulary_ = vocabulary if vocabulary else CategoricalVocabulary()
        self._tokenizer = tokenizer_fn or tokenizer

    def fit(self, raw_documents, unused_y=None) -> VocabularyProcessor:
        """Learn the vocabulary of `raw_documents` (then frozen)."""
        for tokens in self._tokenizer(raw_documents):
            for token in tokens:
                self.vocabulary_.add(token)
        if self.min_frequency > 0:
            self.vocabulary_.trim(self.min_frequency)
        self.vocabulary_.freeze()
        return self

    def fit_transform(self, raw_documents, unused_y=None):
        """`fit`, then `transform` (a generator of rows)."""
        raw_documents = list(raw_documents)
        self.fit(raw_documents)
        return self.transform(raw_documents)

    def transform(self, raw_documents):
        """Yield each document as an int64 row of `max_document_length` ids (truncated,
        padded with 0)."""
        for tokens in self._tokenizer(raw_documents):
            row = np.zeros(self.max_document_length, np.int64)
            for i, token in enumerate(tokens[:self.max_document_length]):
                row[i] = self.vocabulary_.get(token)
            yield row

    def reverse(self, documents):
        """Yield each row of ids as its tokens joined by spaces."""
        for row in documents:
            yield " ".join(self.vocabulary_.reverse(int(i)) for i in row)

    def save(self, filename) -> None:
        """Write the processor as JSON (atomically)."""
        vocab = self.vocabulary_
        state = {"format": "flowgraph.VocabularyProcessor", "version": 1,
                 "max_document_length": self.max_document_length,
                 "min_frequency": self.min_frequency,
                 "unknown_token": vocab._unknown_token,
                 "support_reverse": vocab._support_reverse,
                 "categories": vocab._reverse_mapping[1:],
                 "frequencies": [vocab._freq.get(c, 0) for c in vocab._reverse_mapping[1:]],
                 "frozen": vocab._freeze}
        filename = os.fspath(filename)
        directory = os.path.dirname(os.path.abspath(filename))
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".vocab-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(state, f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, filename)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @classmethod
    def restore(cls, filename, tokenizer_fn=None) -> VocabularyProcessor:
        """A processor saved by `save`."""
        with open(os.fspath(filename), encoding="utf-8") as f:
            try:
                state = json.load(f)
            except ValueError as err:
                raise ValueError(f"VocabularyProcessor.restore: {filename} is not a saved "
                                 f"VocabularyProcessor (JSON): {err}") from None
        if not isinstance(state, dict) or state.get("format") != \
                "flowgraph.VocabularyProcessor":
            raise ValueError(f"VocabularyProcessor.restore: {filename} is not a file "
                             f"written by VocabularyProcessor.save (TF1's pickled files "
                             f"are not read: fit the processor again and save it).")
        categories = state["categories"]
        frequencies = state["frequencies"]
        if not isinstance(categories, list) or len(frequencies) != len(categories):
            raise ValueError(f"VocabularyProcessor.restore: {filename} is damaged: "
                             f"{len(categories)} categories, {len(frequencies)} counts.")
        vocab = CategoricalVocabulary(state["unknown_token"], state["support_reverse"])
        for category, count in zip(categories, frequencies):
            vocab.get(category)
            if count:
                vocab._freq[category] = count
        vocab.freeze(state["frozen"])
        return cls(state["max_document_length"], state["min_frequency"], vocab,
                   tokenizer_fn)
