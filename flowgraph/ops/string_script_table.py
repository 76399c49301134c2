"""Unicode script codes of every code point (ICU's ``UScriptCode`` numbers, as TensorFlow
2.15's ``UnicodeScript`` op returns them), for `flowgraph/backends/cpu/kernels_string_ngrams.py`.

The table covers all of U+0000..U+10FFFF: 1587 runs of equal script, stored as
the run starts (delta-coded, uint32 little-endian) followed by one uint8 script code per
run, zlib-compressed and base64-encoded. Unassigned and private-use code points have
code 103 (``USCRIPT_UNKNOWN``); combining marks shared by scripts 1 (Inherited);
punctuation, digits and symbols 0 (Common). Values outside the code space map to -1 in
the kernel.

Example
-------
>>> from flowgraph.ops.string_script_table import script_runs
>>> starts, codes = script_runs()
>>> int(codes[starts.searchsorted(0x41, side="right") - 1])  # "A" is Latin
25
"""

from __future__ import annotations

import base64
import functools
import zlib

import numpy as np

__all__ = ["RUN_COUNT", "script_runs"]

RUN_COUNT = 1587

_BLOB = (
    "eNqlWOtvXEcVv3P37u7dh9f2xllnbWe9SR078SNvN07SNElLE6pUTtOUpGmiKhItB5qQpsRFfagPpSqlIqWliD4sHgFK"
    "aEGC8kopFBoQiL+Aik/9wGc+8An4gsSZe3/j/XnYtQvVb2fn3nmcc+bMmXPO3CAIgv1aBrTkUG/SYrR0o85q6cfzMOrf"
    "6d8Y+mwJtfRpOa8lwpgM2t278Z4NjeP3PtR7tVS09Gh5BrTeRN8o3reidjR2aIm1DIKXXVMJMhq8G9A1bUoTdRHzBvB+"
    "FvVamnsD8d4MWWzfbmrfiGenyyG8O36Wx7SWlXivos2NX63lCNbSjbkDpMcYba7U0J739Buhv+CNj0DD0BhDe1r39Juj"
    "ce34hW1qXm/Wm58h2nnPPux7L/bCjSl4NtOJv5O/6I3P0JhukqUMGnlv/HL69fn5+s1gbKaDfquQMST9sk4iT2ZDfDOe"
    "DjNYRwT6Pp2wzRlYibFd3rrdee9BW+z1R1hXSO28t0X0F5agXWyju0488p4P4b0NwcPns817d7bbQ+eI+6t4XuXZmiEZ"
    "WLactycx2oq0L3Y/dpFd2/O/rs1+Ov+0ymvvx9is154jHbhzbH3Xx9E/grYxemefnic9Wnkuw6f68tj+CVqzfbjV24e8"
    "J5tr3+C9r/mQ85yMO732m1E3oVsXs46h3enkqTD1m3bMIdQl8Oui9Zdg/872+rBfvh05/3AP6TxHte/jCmTftv8E+E1A"
    "rwfQ52KpO7NlL3ba9wbtv5V3EmMGKLZlSC9DJM9eiiEhxrLcFbT3YuxtoD0Fmvu0bIdd2/YZtHeTb9mM9br1heQvYtJh"
    "Vxsfn2vjk7OwQ2d/W8ivsJ86gHoXzbMPNc8WRr33uEPcN5TfhIjJfF4qRMe+r/DiYoH20rYfp/huSP9Mswvzm/BJa9A3"
    "6unF8RxE3Yuz5WLKK2Eap509X4ZQc2HLLuy8z1But4nynTnoL7+ED5ghX1wh31Sgc/z/1laGo7A755NPQJfvo43jGu9X"
    "HTJEtL8R2dixNvHYtt9N71nycfdQ3GvCb5bx7s7rPjwfIT3epeUNLdfqaf+/j6S0n4/SegfktOdl0qS+5jTmxcgrPwV5"
    "psknjWNf3Zl0Z3cG8w6gLqO9iZzTkN8vkR+wNGapv0i6G6YcukA278eYmxGn3L2A/SDX7WxjwjsvEdG+nfJlR/P1iXRt"
    "/Rhj/UGkB+WcScfdD5vNQwfuPjLg2bDpkJ9aPp/DmToDmj3YY/t8vZb1pIueNv7zOvIJhuzP8X7Wiw9N775VolxmivYi"
    "00GvnPOxfouUS5XRPuDJxrmvO8vW9h6jnJFjgN2nw56/cv5jCs8Xyba2kH9zd7AR0MmgLUuxsOHZagSZxmEPmykGOr2P"
    "EN0I+xMjVjlbf9HasUn51jDXjnmVdOj4Tno5NeupRvbaxL7EdJZZr872hojOANnBPtBYBbn7MG8j+StHx8+3V5N8kZdf"
    "50HXlTHKJwqwYWcrNfKTK4hXlWKzuwtZ/d8Kf7AN+78NfTnSu5Vl1LT8x7gXv0L4HDd+HH55CDpwcWQW/BtkQzd5MbRO"
    "tp6jOF0F7THQOk3fEkrod3u9v0PuybHZ5Uq7oaMi3R/+13sh54V+LPLvZFnvzuPi05e0nKIxDeT6Tv9XsM8u57Fn+hby"
    "LTns3wrk1U6H1+NMhnQftj7uGr5v3IvYXKb1sQ+NvfU2vHu/s8EixaqQ/HwJ/N1ajsLWExlNK05MUR5WJH/T9PRfgc36"
    "+zDpfWcKaU9i0lHO61/nvedYdya1x7fJdrZSjjqfSWP6A7Rvdr1/0PKuEtgUtWT4k04+qEze0di2M0x5DLeJ0afJH+ZI"
    "r0WKIW7t7m5v9/wtnXBS6/twJ4rIDnrhm3zdlChG/Ks/1ZNV4vsmPcNW7n+uxb6b1PdnQM99V7qk7ZEOPEP5e4b8FucW"
    "tpxSYf+B9jH03Uh0YzobDczZDR9i9TBP97jj4FNHDP4E1nWwzbcp/5uYIZs3nl73e7lL7PUPeT4l632Lc+PuRL4xYlrf"
    "Mi+FqR1lyaZuz7bm9Hp3Z/Yzf6a4zbmbk/O8Se9LjrZ9+CPlNRvoDsjzepXgx9C3R8vvaW2Dnhz+c3GJ7765JfpMmzt4"
    "O/rLFX9e5O1V1EGGIuk7S3JkqX27Ox+mdS+/F3bT7X3L6CZ/Ymn/CDn8gPcNy9EpePetHGz7L5nU3tw5cvUc+J6gXLiP"
    "7k0znp9zsbjhxehHIM8dlLuWyZ74u2KWcpA6fT8tkGx52NVX6W7hdJBTwT64ksaq6Z7U33wAPhdrKc8t6uiHVYCGNv5V"
    "GR5S/3D1b8WFWGP94VNa/h4kQixGNjCVoCIo9t8iX4lNLJkEKxKEQYK0NoogXCuKcJ0cl+NPyBNyp2KthJKMKZpiUIyk"
    "M3qWQfcSGF4C1y2DkfZYKZ0wsAhrOmBUglFZ1RZjLQRjMlSWBEG5WpLlkVOsXy3NoCnjiolAJmUqQX+CQfUug5JivWx2"
    "2C7bZXeK/h2y435xMHKj4sG9svcOUXw2trI8KCZoQeqVuF5R6L8RU4dJdISdEtT1pzMlUA5qRs66JMHG5H9GZqSel3yq"
    "gBss/nu9cSC9CXRCr4Wp6r/0qYR9msDUJCtVUaOVmlZV22IHyQbF05+U+KIVo65y1HcphbvlAUXxcHD4nJyryqwEszI7"
    "JDelGHpSnrxArHViRSXOXZALysPCylFfOAEJrHGnNq4SiYnTFdrXIGGdSFQVh7R7yyIkbaq2RHVyRj5tKTWk0SUnZFqm"
    "98geKWzbKlvlh4ovyrcURxNsamFO5l58QV6Q71iclJNn5awce14UO2UxnvmyPKJ4SB56XB5/VB59TCzuktssrspVlfxa"
    "gl/K2/IbeUf2WzwsD8uris8rLssrauDfULy+gK8onlsE85zX8APFNxVXFN9VDMprim8n+Km8JC/9Vhbj1wl+Im/J9+QN"
    "4M0EP16EnxF+Lk/bU32fpDio+LpclK8l+ILi0AJ+IacSzL8cvKf7Oi/z7+lfrU9tqyYvy7MOsNmF01DBJn5onBeLmQX8"
    "CnhXcUnx/QTObD4qPOZ9gXwU9C5CkBzn/wCYhjSV"
)


@functools.cache
def script_runs() -> tuple[np.ndarray, np.ndarray]:
    """``(starts, codes)``: run ``i`` covers code points ``starts[i]`` up to the next
    start, all of script ``codes[i]`` (both int32 arrays, starts ascending)."""
    raw = zlib.decompress(base64.b64decode("".join(_BLOB)))
    deltas = np.frombuffer(raw[:4 * RUN_COUNT], dtype="<u4")
    codes = np.frombuffer(raw[4 * RUN_COUNT:], dtype=np.uint8)
    return np.cumsum(deltas).astype(np.int32), codes.astype(np.int32)
