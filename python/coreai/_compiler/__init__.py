"""The Core AI compiler front end: IR (`ir`), op builders (`dialects.coreai`),
serializer, printer, optimizer and model loader."""
from . import ir  # noqa: F401
