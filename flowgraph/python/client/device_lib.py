"""``from tensorflow.python.client import device_lib`` compatibility path.

Example
-------
>>> from flowgraph.python.client import device_lib
>>> device_lib.list_local_devices()[0].device_type
'CPU'
"""

from flowgraph.backends import list_local_devices

__all__ = ["list_local_devices"]
