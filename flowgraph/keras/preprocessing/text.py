"""`tf.keras.preprocessing.text`: word splitting, hashing and the `Tokenizer`.

Keras' rules: text is lower-cased, every character of ``filters`` becomes the
separator, and empty pieces are dropped. The `Tokenizer` numbers words by decreasing
count from 1 (ties keep the order in which words were first seen; index 0 is never a
word), with ``oov_token``, when given, at index 1.

Example
-------
>>> from flowgraph.keras.preprocessing.text import Tokenizer
>>> tok = Tokenizer()
>>> tok.fit_on_texts(["the cat sat", "the dog"])
>>> tok.word_index
{'the': 1, 'cat': 2, 'sat': 3, 'dog': 4}
>>> tok.texts_to_sequences(["the dog sat down"])
[[1, 4, 3]]
"""

from __future__ import annotations

import collections
import hashlib
import json

import numpy as np

__all__ = ["Tokenizer", "hashing_trick", "one_hot", "text_to_word_sequence",
           "tokenizer_from_json"]

DEFAULT_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'


def text_to_word_sequence(input_text, filters=DEFAULT_FILTERS, lower=True, split=" "):
    """The words of ``input_text``: filtered characters act as ``split``.

    Example
    -------
    >>> text_to_word_sequence("Hello, World!  Again")
    ['hello', 'world', 'again']
    """
    if lower:
        input_text = input_text.lower()
    input_text = input_text.translate(str.maketrans({c: split for c in filters}))
    return [w for w in input_text.split(split) if w]


def _md5(word: str) -> int:
    return int(hashlib.md5(word.encode()).hexdigest(), 16)


def hashing_trick(text, n, hash_function=None, filters=DEFAULT_FILTERS, lower=True,
                  split=" ", analyzer=None):
    """Each word's ``hash_function(word) % (n - 1) + 1`` (indices 1..n-1).

    ``hash_function`` defaults to Python's `hash` (salted per process unless
    ``PYTHONHASHSEED`` is set); ``'md5'`` is stable across processes.

    Example
    -------
    >>> hashing_trick("the cat the", 10, hash_function="md5")
    [6, 3, 6]
    """
    if hash_function is None:
        hash_function = hash
    elif hash_function == "md5":
        hash_function = _md5
    words = (analyzer(text) if analyzer is not None else
             text_to_word_sequence(text, filters=filters, lower=lower, split=split))
    return [hash_function(w) % (n - 1) + 1 for w in words]


def one_hot(input_text, n, filters=DEFAULT_FILTERS, lower=True, split=" ", analyzer=None):
    """`hashing_trick` with Python's `hash`: word indices in ``1..n-1``.

    Example
    -------
    >>> codes = one_hot("a b a", 5)
    >>> codes[0] == codes[2] and all(1 <= c <= 4 for c in codes)
    True
    """
    return hashing_trick(input_text, n, hash_function=hash, filters=filters, lower=lower,
                         split=split, analyzer=analyzer)


class Tokenizer:
    """Turns texts into sequences of word indices or into document-term matrices.

    ``num_words`` keeps the ``num_words - 1`` most frequent words when converting (the
    vocabulary itself keeps every word); unknown or dropped words map to ``oov_token``'s
    index when one is given and are skipped otherwise. A text given as a list is taken
    as its tokens; ``char_level=True`` makes every character a token.

    Example
    -------
    >>> tok = Tokenizer(num_words=3, oov_token="<unk>")
    >>> tok.fit_on_texts(["b a b", "c b"])
    >>> tok.word_index, tok.texts_to_sequences(["a b z"])
    ({'<unk>': 1, 'b': 2, 'a': 3, 'c': 4}, [[1, 2, 1]])
    """

    def __init__(self, num_words=None, filters=DEFAULT_FILTERS, lower=True, split=" ",
                 char_level=False, oov_token=None, analyzer=None, **kwargs) -> None:
        if "nb_words" in kwargs:
            num_words = kwargs.pop("nb_words")
        document_count = kwargs.pop("document_count", 0)
        if kwargs:
            raise TypeError(f"Tokenizer: Unrecognized keyword arguments: {kwargs}")
        self.word_counts = collections.OrderedDict()
        self.word_docs = collections.defaultdict(int)
        self.filters, self.split, self.lower = filters, split, lower
        self.num_words, self.document_count = num_words, document_count
        self.char_level, self.oov_token, self.analyzer = char_level, oov_token, analyzer
        self.index_docs = collections.defaultdict(int)
        self.word_index: dict = {}
        self.index_word: dict = {}

    def _tokens(self, text) -> list:
        if self.char_level or isinstance(text, list):
            if self.lower:
                text = [t.lower() for t in text] if isinstance(text, list) else text.lower()
            return list(text)
        if self.analyzer is not None:
            return self.analyzer(text)
        return text_to_word_sequence(text, filters=self.filters, lower=self.lower,
                                     split=self.split)

    def fit_on_texts(self, texts) -> None:
        """Count the words of ``texts`` (strings, or lists of tokens) and renumber them."""
        for text in texts:
            self.document_count += 1
            tokens = self._tokens(text)
            for w in tokens:
                self.word_counts[w] = self.word_counts.get(w, 0) + 1
            for w in set(tokens):
                self.word_docs[w] += 1
        # sorted() is stable: equal counts keep the order words were first seen in.
        by_count = sorted(self.word_counts.items(), key=lambda kv: kv[1], reverse=True)
        vocabulary = ([] if self.oov_token is None else [self.oov_token])
        vocabulary += [w for w, _ in by_count]
        self.word_index = dict(zip(vocabulary, range(1, len(vocabulary) + 1)))
        self.index_word = {i: w for w, i in self.word_index.items()}
        for w, c in list(self.word_docs.items()):
            self.index_docs[self.word_index[w]] = c

    def fit_on_sequences(self, sequences) -> None:
        """Count document frequencies of already-numbered sequences (for ``tfidf``)."""
        self.document_count += len(sequences)
        for seq in sequences:
            for i in set(seq):
                self.index_docs[i] += 1

    def _keep(self, index) -> bool:
        return not (self.num_words and index >= self.num_words)

    def texts_to_sequences_generator(self, texts):
        """`texts_to_sequences`, one text at a time."""
        oov = self.word_index.get(self.oov_token)
        for text in texts:
            out = []
            for w in self._tokens(text):
                i = self.word_index.get(w)
                if i is not None and self._keep(i):
                    out.append(i)
                elif self.oov_token is not None:
                    out.append(oov)
            yield out

    def texts_to_sequences(self, texts) -> list:
        """Each text as a list of word indices."""
        return list(self.texts_to_sequences_generator(texts))

    def sequences_to_texts_generator(self, sequences):
        """`sequences_to_texts`, one sequence at a time."""
        oov = self.word_index.get(self.oov_token)
        for seq in sequences:
            words = []
            for i in seq:
                w = self.index_word.get(i)
                if w is not None and self._keep(i):
                    words.append(w)
                elif self.oov_token is not None:
                    words.append(self.index_word[oov])
            yield " ".join(words)

    def sequences_to_texts(self, sequences) -> list:
        """Each sequence of indices back to a space-joined text."""
        return list(self.sequences_to_texts_generator(sequences))

    def texts_to_matrix(self, texts, mode="binary") -> np.ndarray:
        """`sequences_to_matrix` of `texts_to_sequences`."""
        return self.sequences_to_matrix(self.texts_to_sequences(texts), mode=mode)

    def sequences_to_matrix(self, sequences, mode="binary") -> np.ndarray:
        """A float64 ``(len(sequences), num_words)`` matrix: per word ``binary`` 1,
        ``count``, ``freq`` (count / length) or ``tfidf``
        (``(1 + ln count) * ln(1 + documents / (1 + documents with the word))``)."""
        if mode not in ("binary", "count", "freq", "tfidf"):
            raise ValueError(f"Tokenizer: Unknown vectorization mode: {mode!r}; use "
                             f"'binary', 'count', 'freq' or 'tfidf'.")
        if self.num_words:
            width = self.num_words
        elif self.word_index:
            width = len(self.word_index) + 1
        else:
            raise ValueError("Tokenizer: Specify a dimension (`num_words` argument), or fit "
                             "on some text data first.")
        if mode == "tfidf" and not self.document_count:
            raise ValueError("Tokenizer: Fit the Tokenizer on some data before using tfidf "
                             "mode.")
        out = np.zeros((len(sequences), width))
        for row, seq in enumerate(sequences):
            if not seq:
                continue
            counts = collections.Counter(j for j in seq if j < width)
            for j, c in counts.items():
                if mode == "count":
                    out[row, j] = c
                elif mode == "freq":
                    out[row, j] = c / len(seq)
                elif mode == "binary":
                    out[row, j] = 1
                else:
                    idf = np.log(1 + self.document_count / (1 + self.index_docs.get(j, 0)))
                    out[row, j] = (1 + np.log(c)) * idf
        return out

    def get_config(self) -> dict:
        """The settings, with the count tables as JSON strings (Keras' layout)."""
        return {"num_words": self.num_words, "filters": self.filters, "lower": self.lower,
                "split": self.split, "char_level": self.char_level,
                "oov_token": self.oov_token, "document_count": self.document_count,
                "word_counts": json.dumps(self.word_counts),
                "word_docs": json.dumps(self.word_docs),
                "index_docs": json.dumps(self.index_docs),
                "index_word": json.dumps(self.index_word),
                "word_index": json.dumps(self.word_index)}

    def to_json(self, **kwargs) -> str:
        """``{"class_name": "Tokenizer", "config": get_config()}`` as JSON."""
        return json.dumps({"class_name": type(self).__name__, "config": self.get_config()},
                          **kwargs)


def tokenizer_from_json(json_string) -> Tokenizer:
    """The `Tokenizer` that `Tokenizer.to_json` wrote.

    Example
    -------
    >>> tok = Tokenizer()
    >>> tok.fit_on_texts(["a b b"])
    >>> tokenizer_from_json(tok.to_json()).word_index
    {'b': 1, 'a': 2}
    """
    config = dict(json.loads(json_string).get("config"))
    tables = {k: json.loads(config.pop(k)) for k in
              ("word_counts", "word_docs", "index_docs", "index_word", "word_index")}
    tok = Tokenizer(**config)
    tok.word_counts, tok.word_docs = tables["word_counts"], tables["word_docs"]
    tok.index_docs = {int(k): v for k, v in tables["index_docs"].items()}
    tok.index_word = {int(k): v for k, v in tables["index_word"].items()}
    tok.word_index = tables["word_index"]
    return tok
