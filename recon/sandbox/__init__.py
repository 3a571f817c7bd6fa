"""recon.sandbox."""
