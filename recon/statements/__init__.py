"""recon.statements."""
