"""Protocol v1 between the referee and a bot: framing (msgpack or JSON Lines) and messages.

The full language-neutral specification is `docs/protocol.md`; this package is its reference
implementation, shared by the referee and by the Python bot SDK (`protocol.sdk`).
"""

from protocol.framing import (
    DEFAULT_MAX_MESSAGE_BYTES,
    ENCODINGS,
    Decoder,
    Encoder,
    ProtocolError,
    decode_all,
    encode,
)
from protocol.messages import (
    BOT_MESSAGE_TYPES,
    PROTOCOL_VERSION,
    REFEREE_MESSAGE_TYPES,
    check_bot_message,
    check_reply,
)

__all__ = [
    "BOT_MESSAGE_TYPES",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "ENCODINGS",
    "PROTOCOL_VERSION",
    "REFEREE_MESSAGE_TYPES",
    "Decoder",
    "Encoder",
    "ProtocolError",
    "check_bot_message",
    "check_reply",
    "decode_all",
    "encode",
]
