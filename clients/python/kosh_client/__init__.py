"""A typed Python client for the Kosh API, generated from its OpenAPI document (standard library only)."""
from ._http import KoshError
from .client import KoshClient

__all__ = ["KoshClient", "KoshError"]
