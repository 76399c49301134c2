"""`tf.keras.preprocessing`: NumPy-side data preparation (`sequence`, `text`, `image`).

Example
-------
>>> import flowgraph as tf
>>> tf.keras.preprocessing.sequence.pad_sequences([[1], [2, 3]]).tolist()
[[0, 1], [2, 3]]
"""

from flowgraph.keras.preprocessing import image, image_directory, sequence, text

# flow_from_directory's iterator reads image files; it joins the image namespace here.
image.DirectoryIterator = image_directory.DirectoryIterator

__all__ = ["image", "sequence", "text"]
