"""IOGate: storage-array performance acceptance, as a library.

This package never imports pytest; the pytest layer lives in fixtures/, plugins/
and criteria/.
"""

__version__ = "0.1.0"
