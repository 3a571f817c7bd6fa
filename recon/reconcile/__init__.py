"""recon.reconcile."""
