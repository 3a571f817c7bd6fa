"""recon.analytics."""
