"""File helpers of `tf.keras.utils`: `get_file` (fetch into the Keras cache, check a hash,
extract an archive) and the PIL image converters `array_to_img`, `img_to_array`,
`load_img`, `save_img`.

flowgraph makes no network connections: `get_file` copies ``file://`` URLs and local
paths, and an ``http(s)://`` origin works only when the file is already in the cache
(put it there, or pass a local path); otherwise the error names the URL and the path to
put the file at. The image functions need Pillow (not a flowgraph dependency): without
it they raise ImportError, as TF's do.

Example
-------
>>> import os, tempfile
>>> import flowgraph as tf
>>> src = os.path.join(tempfile.mkdtemp(), "data.txt")
>>> _ = open(src, "w").write("hi")
>>> where = {"cache_dir": os.path.dirname(src), "cache_subdir": "cache"}
>>> path = tf.keras.utils.get_file("data.txt", "file://" + src, **where)  # doctest: +ELLIPSIS
Downloading data from file:///.../data.txt
...2/2 [==============================] - ...
>>> open(path).read()
'hi'
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import urllib.parse
import warnings
import zipfile

import numpy as np

from flowgraph.keras.utils_data import Progbar, print_msg

__all__ = ["array_to_img", "get_file", "img_to_array", "load_img", "save_img"]


# -- get_file ----------------------------------------------------------------------------------
def _hash_file(path: str, algorithm: str) -> str:
    digest = hashlib.sha256() if algorithm == "sha256" else hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(65535), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _algorithm(file_hash: str, hash_algorithm: str) -> str:
    if hash_algorithm == "sha256" or (hash_algorithm == "auto" and len(file_hash) == 64):
        return "sha256"
    return "md5"


def _validate(path: str, file_hash: str, algorithm: str) -> bool:
    return _hash_file(path, _algorithm(file_hash, algorithm)) == str(file_hash)


def _local_source(origin: str) -> str | None:
    """The local path `origin` names (a ``file://`` URL or a path), else None."""
    parsed = urllib.parse.urlparse(origin)
    if parsed.scheme == "file":
        return urllib.parse.unquote(parsed.path)
    if parsed.scheme in ("", ) or (len(parsed.scheme) == 1 and os.name == "nt"):
        return origin
    return None


def _extract(path: str, target: str, archive_format="auto") -> bool:
    formats = {"auto": ("tar", "zip"), None: ()}.get(archive_format, archive_format)
    if isinstance(formats, str):
        formats = (formats,)
    for kind in formats:
        if kind == "tar" and tarfile.is_tarfile(path):
            with tarfile.open(path) as archive:
                root = os.path.realpath(target)
                for member in archive.getmembers():
                    dest = os.path.realpath(os.path.join(target, member.name))
                    if not dest.startswith(root + os.sep) and dest != root:
                        raise ValueError(f"get_file: archive {path} holds a path outside "
                                         f"its folder: {member.name!r}")
                archive.extractall(target)
            return True
        if kind == "zip" and zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                archive.extractall(target)
            return True
    return False


def get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None,
             cache_subdir="datasets", hash_algorithm="auto", extract=False,
             archive_format="auto", cache_dir=None) -> str:
    """The path of `fname` in the Keras cache (``cache_dir/cache_subdir``; ``~/.keras``
    by default, ``/tmp/.keras`` when that folder is not writable), fetched from `origin`
    unless already there with the right hash; `untar` / `extract` unpack the archive
    beside it. ``file://`` URLs and local paths are copied; ``http(s)://`` needs the file
    to be in the cache already (no network access)."""
    if origin is None:
        raise ValueError('Please specify the "origin" argument (URL of the file to '
                         'download).')
    base = os.path.expanduser(cache_dir or os.path.join("~", ".keras"))
    if not os.access(base, os.W_OK):
        base = os.path.join("/tmp", ".keras")
    folder = os.path.join(base, cache_subdir)
    os.makedirs(folder, exist_ok=True)
    if not fname:
        fname = os.path.basename(urllib.parse.urlparse(origin).path)
        if not fname:
            raise ValueError(f"Can't parse the file name from the origin provided: "
                             f"'{origin}'.Please specify the `fname` as the input param.")
    if untar:
        if fname.endswith(".tar.gz"):
            fname = fname[:-len(".tar.gz")]
        untar_path = os.path.join(folder, fname)
        path = untar_path + ".tar.gz"
    else:
        path = os.path.join(folder, fname)
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, "md5"
    fetch = True
    if os.path.exists(path):
        fetch = file_hash is not None and not _validate(path, file_hash, hash_algorithm)
        if fetch:
            print_msg(f"A local file was found, but it seems to be incomplete or outdated "
                      f"because the {hash_algorithm} file hash does not match the original "
                      f"value of {file_hash} so we will re-download the data.")
    if fetch:
        _fetch(origin, path)
        if file_hash is not None and not _validate(path, file_hash, hash_algorithm):
            raise ValueError(f"Incomplete or corrupted file detected. The {hash_algorithm} "
                             f"file hash does not match the provided value of {file_hash}.")
    if untar:
        if not os.path.exists(untar_path):
            _extract(path, folder, archive_format="tar")
        return untar_path
    if extract:
        _extract(path, folder, archive_format)
    return path


def _fetch(origin: str, path: str) -> None:
    source = _local_source(origin)
    if source is None:
        raise OSError(f"get_file: cannot download {origin}: flowgraph makes no network "
                      f"connections. Download it yourself and either put it at {path} "
                      f"(it is then used as is) or pass its local path or a file:// URL as "
                      f"`origin`.")
    print_msg(f"Downloading data from {origin}")
    if not os.path.isfile(source):
        raise Exception(f"URL fetch failure on {origin}: None -- [Errno 2] No such file or "
                        f"directory: '{source}'")
    size = os.path.getsize(source)
    tmp = path + ".part"
    try:
        shutil.copyfile(source, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    Progbar(size, verbose=1).update(size)


# -- images ------------------------------------------------------------------------------------
def _pil(what: str):
    try:
        from PIL import Image
    except ImportError as err:
        raise ImportError(f"Could not import PIL.Image. The use of `{what}` requires PIL.") \
            from err
    return Image


def _data_format(data_format, message: str):
    from flowgraph.keras import backend

    data_format = data_format or backend.image_data_format()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"{message}: {data_format}")
    return data_format


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A PIL image from a ``(height, width, channels)`` array (1, 3 or 4 channels),
    values rescaled to 0-255 unless ``scale=False``."""
    from flowgraph.keras import backend

    image = _pil("array_to_img")
    data_format = _data_format(data_format, "Invalid data_format")
    x = np.asarray(x, dtype=dtype or backend.floatx())
    if x.ndim != 3:
        raise ValueError(f"Expected image array to have rank 3 (single image). Got array "
                         f"with shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        top = np.max(x)
        if top != 0:
            x = x / top
        x = x * 255
    channels = x.shape[2]
    if channels == 4:
        return image.fromarray(x.astype("uint8"), "RGBA")
    if channels == 3:
        return image.fromarray(x.astype("uint8"), "RGB")
    if channels == 1:
        if np.max(x) > 255:  # 32-bit signed integer grayscale
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


def img_to_array(img, data_format=None, dtype=None) -> np.ndarray:
    """The ``(height, width, channels)`` (or channels-first) float array of a PIL
    image."""
    from flowgraph.keras import backend

    data_format = _data_format(data_format, "Unknown data_format")
    x = np.asarray(img, dtype=dtype or backend.floatx())
    if x.ndim == 3:
        return x.transpose(2, 0, 1) if data_format == "channels_first" else x
    if x.ndim == 2:
        return x.reshape((1, *x.shape)) if data_format == "channels_first" else \
            x.reshape((*x.shape, 1))
    raise ValueError(f"Unsupported image shape: {x.shape}")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs) -> None:
    """Write array `x` as an image file (format from `file_format` or the name)."""
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format in ("jpg", "jpeg"):
        warnings.warn("The JPG format does not support RGBA images, converting to RGB.",
                      stacklevel=2)
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


_RESAMPLE = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")


def load_img(path, grayscale=False, color_mode="rgb", target_size=None,
             interpolation="nearest", keep_aspect_ratio=False):
    """A PIL image read from a path (or a file object), converted to `color_mode`
    (``'grayscale'``, ``'rgb'``, ``'rgba'``) and resized to ``target_size = (height,
    width)`` with `interpolation` (center-cropped first with `keep_aspect_ratio`)."""
    image = _pil("load_img")
    if grayscale:
        warnings.warn("grayscale is deprecated. Please use color_mode = 'grayscale'",
                      stacklevel=2)
        color_mode = "grayscale"
    if isinstance(path, io.BytesIO):
        img = image.open(path)
    elif isinstance(path, str | bytes | os.PathLike):
        with open(os.fspath(path) if not isinstance(path, bytes) else path.decode(),
                  "rb") as f:
            img = image.open(io.BytesIO(f.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    if color_mode == "grayscale":
        if img.mode not in ("L", "I;16", "I"):
            img = img.convert("L")
    elif color_mode == "rgba":
        if img.mode != "RGBA":
            img = img.convert("RGBA")
    elif color_mode == "rgb":
        if img.mode != "RGB":
            img = img.convert("RGB")
    else:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    if target_size is not None:
        wanted = (target_size[1], target_size[0])
        if img.size != wanted:
            if interpolation not in _RESAMPLE:
                raise ValueError(f"Invalid interpolation method {interpolation} specified. "
                                 f"Supported methods are {', '.join(_RESAMPLE)}")
            resample = getattr(image, "Resampling", image)
            method = getattr(resample, interpolation.upper())
            if keep_aspect_ratio:
                width, height = img.size
                crop_h = min(height, int(width * wanted[1] / wanted[0]))
                crop_w = min(width, int(height * wanted[0] / wanted[1]))
                top, left = (height - crop_h) // 2, (width - crop_w) // 2
                img = img.crop((left, top, left + crop_w, top + crop_h))
            img = img.resize(wanted, method)
    return img
