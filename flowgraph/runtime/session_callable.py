"""`Session.make_callable`: the two kinds of callable TensorFlow's sessions make.

With a `feed_list` the callable is `Session.run` with those feeds, taken positionally
(it also takes ``options``/``run_metadata``, and fails as `run` does once the session is
closed). Without one, the fetches are checked when the callable is made, it takes no
feeds, ``options``/``run_metadata`` only with `accept_options`, and it raises
CancelledError once the session is closed.

>>> import flowgraph as tf
>>> with tf.Graph().as_default():
...     x = tf.placeholder(tf.float32, [])
...     with tf.Session() as sess:
...         double = make_callable(sess, x * 2, [x], False)
...         print(double(3.0))
6.0
"""

from __future__ import annotations

from flowgraph.framework import errors
from flowgraph.runtime.fetch import FetchMapper

__all__ = ["make_callable"]


def make_callable(session, fetches, feed_list, accept_options):
    """A function running `fetches` in `session` (see the module)."""
    if feed_list is not None:
        if not isinstance(feed_list, (list, tuple)):
            raise TypeError("Argument `feed_list` must be a list or tuple. "
                            f"Received: feed_list={feed_list}")
        feeds = list(feed_list)

        def call(*args, **kwargs):
            # TensorFlow pairs values with feed_list positionally: a feed left without
            # a value fails as an unfed placeholder would, extra values are ignored.
            return session.run(fetches, dict(zip(feeds, args)), **kwargs)

        return call
    FetchMapper.build(session.graph, fetches)  # bad fetches fail here, as in TF

    def closed() -> Exception:
        return errors.CancelledError(None, None, "Session has been closed.")

    if accept_options:
        def call_with_options(options=None, run_metadata=None):
            if session._closed:
                raise closed()
            return session.run(fetches, None, options, run_metadata)

        return call_with_options

    def call_without_feeds():
        if session._closed:
            raise closed()
        return session.run(fetches)

    return call_without_feeds
