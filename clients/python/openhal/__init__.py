"""A Python client for the gateway's OpenHAL Hub, and a gpiozero pin factory.

Standard library only (``openhal.pinfactory`` needs gpiozero, ws:// and
wss:// the websockets package). See
docs/python.md in the gateway's repository.
"""

__version__ = "0.1.0"

from .client import Client, connect  # noqa: E402
from .errors import *  # noqa: E402,F401,F403 (errors.__all__)
from . import errors as _errors  # noqa: E402
from .types import Confirmation, Descriptor, InitResult, ModbusRegister, Value, WriteResult  # noqa: E402
from .watch import Watch  # noqa: E402
from .pending import Pending  # noqa: E402

__all__ = ["Client", "connect", "Confirmation", "Descriptor", "InitResult", "ModbusRegister", "Value", "WriteResult", "Watch", "Pending"] + _errors.__all__
