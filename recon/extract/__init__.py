"""recon.extract."""
