"""CPU kernels of the extra image codecs (`flowgraph/ops/image_codec_ops.py`): BMP and
GIF decoding, DecodeImage (any of JPEG, PNG, GIF, BMP), JPEG encoding, JPEG header shapes
and cropped JPEG decoding, all through Pillow (`kernels_image._pil` raises
UnimplementedError without it)."""

from __future__ import annotations

import io

import numpy as np

from flowgraph.backends.cpu import cpu_kernel
from flowgraph.backends.cpu.kernels_image import _decode, _pil
from flowgraph.framework import dtypes as _dtypes
from flowgraph.framework import errors


def _invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def _bytes(contents) -> bytes:
    data = np.asarray(contents, dtype=object).reshape(())[()]
    return data if isinstance(data, bytes) else str(data).encode("latin-1")


def _open(contents, what: str, fmt: str):
    image_mod = _pil()
    data = _bytes(contents)
    try:
        img = image_mod.open(io.BytesIO(data))
        img.load()
    except Exception as e:  # Pillow raises many types for bad data
        raise _invalid(f"{what}: the data ({len(data)} bytes, starting {data[:8]!r}) is not "
                       f"a valid {fmt} image: {e}") from None
    if img.format != fmt:
        raise _invalid(f"{what}: expected {fmt} data, got {img.format}")
    return img


@cpu_kernel("DecodeBmp")
def decode_bmp(contents, *, channels):
    data = _bytes(contents)
    fmt = _signature(data)
    if fmt not in (None, "BMP"):
        raise _invalid(f"Trying to decode {fmt} format using DecodeBmp op. Use "
                       f"`decode_{fmt.lower()}` or `decode_image` instead.")
    return _decode(contents, channels, "DecodeBmp", ("BMP",))


def _gif_all_frames(contents) -> np.ndarray:
    img = _open(contents, "DecodeGif", "GIF")
    frames = []
    for k in range(getattr(img, "n_frames", 1)):
        img.seek(k)
        frames.append(np.asarray(img.convert("RGB")))
    return np.stack(frames).astype(np.uint8)


@cpu_kernel("DecodeGif")
def decode_gif(contents):
    # TF's GIF op decodes PNG and JPEG data too, as one frame of 3 channels.
    if _signature(_bytes(contents)) == "GIF":
        return _gif_all_frames(contents)
    return _decode_any(contents, 3, _dtypes.uint8, True, "DecodeGif")[None]


@cpu_kernel("DecodePng")
def decode_png(contents, *, channels, dtype):
    """TF's DecodePng is its DecodeImage kernel: JPEG and (first-frame) GIF data decode
    too; only BMP is refused."""
    return _decode_any(contents, channels, dtype, False, "DecodePng")


@cpu_kernel("DecodeJpeg")
def decode_jpeg(contents, *, channels, ratio=1, fancy_upscaling=True,
                try_recover_truncated=False, acceptable_fraction=1.0, dct_method=""):
    return _decode_any(contents, channels, _dtypes.uint8, False, "DecodeJpeg", dct_method,
                       fancy_upscaling)


def _gif_frames(contents, channels: int) -> np.ndarray:
    if channels not in (0, 3):
        raise _invalid(f"channels must be 0 or 3 for GIF, got {channels}")
    return _gif_all_frames(contents)


def _signature(data: bytes):
    """The image format named by the data's first bytes (None when unknown)."""
    if data[:3] == b"\xff\xd8\xff":
        return "JPEG"
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return "PNG"
    if data[:3] == b"GIF":
        return "GIF"
    if data[:2] == b"BM":
        return "BMP"
    return None


@cpu_kernel("DecodeImage")
def decode_image(contents, *, channels, dtype, expand_animations):
    """The format is the data's signature (as TensorFlow's DecodeImage); the result is
    uint8 unless `dtype` asks for uint16 (16-bit PNGs kept, 8-bit data scaled up) or
    float32 (scaled to [0, 1])."""
    return _decode_any(contents, channels, dtype, expand_animations, "DecodeImage")


def _decode_any(contents, channels, dtype, expand_animations, op_type, dct_method="",
                fancy_upscaling=True):
    _pil()  # a missing Pillow is named before the data is looked at
    if channels not in (0, 1, 3, 4):
        raise _invalid(f"`channels` must be 0, 1, 3 or 4 but got {channels}")
    fmt = _signature(_bytes(contents))
    dtype = _dtypes.as_dtype(dtype)
    wide = dtype == _dtypes.uint16
    if fmt == "JPEG":
        if channels not in (0, 1, 3):
            raise _invalid(f"JPEG does not support {channels} channels")
        image = _decode(contents, channels, op_type, ("JPEG",), np.uint8, dct_method,
                        fancy_upscaling)
    elif fmt == "PNG":
        image = _decode(contents, channels, op_type, ("PNG",),
                        np.uint16 if wide else np.uint8)
    elif fmt == "GIF":
        image = _gif_frames(contents, channels)
        if not expand_animations:
            image = image[0]
    elif fmt == "BMP":
        if op_type != "DecodeImage":
            raise _invalid(f"Trying to decode BMP format using a wrong op. Use `decode_bmp` "
                           f"or `decode_image` instead. Op used: {op_type}")
        if channels not in (0, 3, 4):
            raise _invalid(f"`channels` must be 0, 3 or 4 for BMP, but got {channels}")
        image = _decode(contents, channels, op_type, ("BMP",))
    else:
        raise _invalid("Unknown image file format. One of JPEG, PNG, GIF, BMP required.")
    if image.dtype == np.uint8 and wide:
        return image.astype(np.uint16) << 8  # TF scales 8-bit JPEG/GIF/BMP data by 256
    if dtype == _dtypes.float32:
        scale = 65535 if image.dtype == np.uint16 else 255
        return image.astype(np.float32) / np.float32(scale)
    return image


@cpu_kernel("EncodeJpegVariableQuality")
def encode_jpeg_variable_quality(images, quality):
    return encode_jpeg(images, format="", quality=int(quality), progressive=False,
                       optimize_size=False, chroma_downsampling=True, density_unit="in",
                       x_density=300, y_density=300, xmp_metadata="")


@cpu_kernel("EncodeJpeg")
def encode_jpeg(image, *, format, quality, progressive, optimize_size,
                chroma_downsampling, density_unit, x_density, y_density, xmp_metadata):
    image_mod = _pil()
    arr = np.asarray(image)
    if arr.ndim != 3 or arr.shape[2] not in (1, 3):
        raise _invalid(f"EncodeJpeg: image must be 3-D [height, width, 1 or 3 channels], "
                       f"got {list(arr.shape)}")
    if not 0 <= int(quality) <= 100:
        raise _invalid(f"EncodeJpeg: quality must be in [0, 100], got {quality}")
    need = {"grayscale": 1, "rgb": 3}.get(format)
    if need is not None and arr.shape[2] != need:
        raise _invalid(f"EncodeJpeg: format={format!r} needs an image with {need} "
                       f"channel(s), got {arr.shape[2]}; pass format='' to use the image's "
                       "own channel count")
    pixels = arr[:, :, 0] if arr.shape[2] == 1 else arr
    img = image_mod.fromarray(pixels.astype(np.uint8), "L" if pixels.ndim == 2 else "RGB")
    buf = io.BytesIO()
    units = {"in": 1, "cm": 2}.get(density_unit, 1)
    img.save(buf, format="JPEG", quality=int(quality), progressive=bool(progressive),
             optimize=bool(optimize_size), subsampling=2 if chroma_downsampling else 0,
             dpi=(int(x_density), int(y_density)) if units == 1 else None)
    out = np.empty((), dtype=object)
    out[()] = buf.getvalue()
    return out


@cpu_kernel("ExtractJpegShape")
def extract_jpeg_shape(contents, *, output_type):
    img = _open(contents, "ExtractJpegShape", "JPEG")
    channels = {"L": 1, "RGB": 3, "CMYK": 4}.get(img.mode, len(img.getbands()))
    from flowgraph.framework import dtypes as _dtypes

    return np.array([img.height, img.width, channels],
                    _dtypes.as_dtype(output_type).as_numpy_dtype)


@cpu_kernel("DecodeAndCropJpeg")
def decode_and_crop_jpeg(contents, crop_window, *, channels, ratio=1, fancy_upscaling=True,
                         try_recover_truncated=False, acceptable_fraction=1.0,
                         dct_method=""):
    full = _decode(contents, channels, "DecodeAndCropJpeg", ("JPEG",), np.uint8, dct_method,
                   fancy_upscaling)
    y, x, h, w = (int(v) for v in np.asarray(crop_window).reshape(-1))
    if y < 0 or x < 0 or h <= 0 or w <= 0 or y + h > full.shape[0] or x + w > full.shape[1]:
        raise _invalid(f"DecodeAndCropJpeg: crop window [{y}, {x}, {h}, {w}] is not inside "
                       f"the {full.shape[0]}x{full.shape[1]} image")
    return np.ascontiguousarray(full[y:y + h, x:x + w])
