"""Statement readers, one module per format (the names of the sandbox's writers in
recon/sandbox/exports): each turns one file into a ParseResult (recon.statements.lines)."""
