"""Packages that are also the function users call: `recon.extract`, `recon.reconcile`, `recon.sql`.

The public API promises `recon.extract(...)`, `recon.reconcile(...)` and `recon.sql("...")`,
and the code of each lives in a package of the same name. Importing a submodule
(`import recon.extract.walk`) rebinds `recon.extract` to the package, so the package itself is
made callable: whichever object the name resolves to, calling it runs the function, and
`recon.extract.walk` still works.

It also documents itself as the function: `inspect.signature(recon.sql)` is the function's
signature (what Jupyter's Shift-Tab and IDEs show), and its ``__doc__`` is the function's
signature and docstring, so ``help(recon.sql)`` and ``recon.sql?`` describe the function
(then the package's own note).
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

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__call_function__()(*args, **kwargs)

    def __call_function__(self) -> Callable[..., Any]:
        """The function a call runs (imported on first use)."""
        module_name, _, func_name = self.__call_target__.partition(":")
        func: Callable[..., Any] = getattr(importlib.import_module(module_name), func_name)
        return func

    @property
    def __signature__(self) -> inspect.Signature:  # read first by inspect.signature
        return inspect.signature(self.__call_function__())

    @property
    def __doc__(self) -> str:  # type: ignore[override]  # help(), Jupyter's `?`: the function
        func = self.__call_function__()
        own = self.__dict__.get("__doc__") or ""
        name = self.__name__.rpartition(".")[2]
        return (
            f"{name}{inspect.signature(func)}\n\n{inspect.getdoc(func) or ''}\n\n"
            f"({self.__name__} is also a package: {inspect.cleandoc(own)})"
        )


def make_callable(package: str, target: str) -> None:
    """Make the already-imported `package` callable as `target` ("module:function")."""
    module = sys.modules[package]
    module.__class__ = _CallablePackage
    module.__call_target__ = target  # type: ignore[attr-defined]
