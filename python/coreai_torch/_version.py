"""The oldest PyTorch this package supports, checked at import."""

MIN_TORCH = (2, 8)


def check_torch_version(version: str) -> None:
    """Raises ImportError naming the installed and the needed release when
    ``version`` (``torch.__version__``) is older than ``MIN_TORCH``."""
    parts = []
    for piece in version.split("+")[0].split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits) if digits else 0)
    if tuple(parts) < MIN_TORCH:
        need = ".".join(map(str, MIN_TORCH))
        raise ImportError(
            f"coreai_torch needs PyTorch >= {need} (torch.export), found {version}; "
            f"install it with: pip install 'torch>={need}'")
