"""The exit statuses of ``sitegen``'s commands, named once: the commands return them and
the help of ``measure`` and ``audit`` prints them."""

EXIT_OK = 0
EXIT_ERROR = 1
"""Any command but ``measure``: the printed error stopped it."""
EXIT_USAGE = 2
"""The command line names something that is not there (as for arguments argparse refuses)."""
EXIT_MEASURE_REFUSED = 2
"""``measure`` refused to run or stopped at the printed error."""
EXIT_MEASURE_INCOMPLETE = 3
"""``measure`` ran, but some planned trials have no ok record (failed or pending)."""
EXIT_AUDIT_MISMATCH = 1
"""``audit``: a figure, table, checksum or signature does not check (one line each)."""
EXIT_INTERRUPTED = 130
