"""Packages that are also the function users call: `recon.extract`, `recon.reconcile`, `recon.sql`.

The public API promises `recon.extract(...)`, `recon.reconcile(...)` and `recon.sql("...")`,
and the code of each lives in a package of the same name. Importing a submodule
(`import recon.extract.walk`) rebinds `recon.extract` to the package, so the package itself is
made callable: whichever object the name resolves to, calling it runs the function, and
`recon.extract.walk` still works. It also shows the function, not the package, to
`inspect.signature`, `help()` and Jupyter's Shift-Tab: its `__signature__`, `__doc__` and
`__wrapped__` are the function's.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import types
from collections.abc import Callable
from typing import Any


class _CallablePackage(types.ModuleType):
    """A package whose call runs its `__call_target__` ("module:function", resolved lazily)."""

    __call_target__: str

    def _target(self) -> Callable[..., Any]:
        module_name, _, func_name = self.__call_target__.partition(":")
        func: Callable[..., Any] = getattr(importlib.import_module(module_name), func_name)
        return func

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        return inspect.signature(self._target())

    @property
    def __wrapped__(self) -> Callable[..., Any]:
        return self._target()

    @property
    def __doc__(self) -> str:
        func = self._target()
        name = f"recon.{func.__name__}" if self.__name__.startswith("recon.") else func.__name__
        return f"{name}{inspect.signature(func)}\n\n{inspect.getdoc(func) or ''}"

    @__doc__.setter
    def __doc__(self, value: str | None) -> None:
        # the package's own docstring (set when it was imported) is kept out of sight
        self.__dict__["_package_doc"] = value


def make_callable(package: str, target: str) -> None:
    """Make the already-imported `package` callable as `target` ("module:function")."""
    module = sys.modules[package]
    module.__class__ = _CallablePackage
    module.__call_target__ = target  # type: ignore[attr-defined]
