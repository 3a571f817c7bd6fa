"""recon.api."""
