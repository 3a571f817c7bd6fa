"""Operations: the scheduled daily job, the end-to-end demo, and their commands.

The top of the data flow: they drive extract, statements, reconcile and report; nothing
below imports them.
"""
