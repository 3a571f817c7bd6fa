"""Packages that are also the function users call: `recon.extract`, `recon.reconcile`, `recon.sql`.

The public API promises `recon.extract(...)`, `recon.reconcile(...)` and `recon.sql("...")`,
and the code of each lives in a package of the same name. Importing a submodule
(`import recon.extract.walk`) rebinds `recon.extract` to the package, so the package itself is
made callable: whichever object the name resolves to, calling it runs the function, and
`recon.extract.walk` still works.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any


class _CallablePackage(types.ModuleType):
    """A package whose call runs its `__call_target__` ("module:function", resolved lazily)."""

    __call_target__: str

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        module_name, _, func_name = self.__call_target__.partition(":")
        return getattr(importlib.import_module(module_name), func_name)(*args, **kwargs)


def make_callable(package: str, target: str) -> None:
    """Make the already-imported `package` callable as `target` ("module:function")."""
    module = sys.modules[package]
    module.__class__ = _CallablePackage
    module.__call_target__ = target  # type: ignore[attr-defined]
