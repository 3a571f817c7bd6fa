"""recon.report."""
