"""recon's SQL files (catalog views, model layers), read as package data.

The name `recon.sql` is also the catalog's query function (`recon.catalog.sql`): the package
is callable (see recon._callable), so ``recon.sql("select ...")`` returns a DataFrame.
"""

from recon._callable import make_callable

make_callable(__name__, "recon.catalog:sql")
