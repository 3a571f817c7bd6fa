"""recon's SQL files (catalog views, model layers), read as package data.

The name `recon.sql` is also the catalog's query function (`recon.catalog.sql`): this package
is callable, so ``recon.sql("select ...")`` works even after ``recon.sql`` was imported as a
package (which the catalog does to read its view files).
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    def __call__(self, query: str, data: Any = None, params: Any = None) -> Any:
        from recon.catalog import sql

        return sql(query, data, params)


sys.modules[__name__].__class__ = _CallableModule
