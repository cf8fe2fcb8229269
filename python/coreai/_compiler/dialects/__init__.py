"""Op builders of the Core AI dialects (`from coreai._compiler.dialects import coreai`)."""
from . import coreai  # noqa: F401
