"""recon's SQL files, read as package data: the catalog views (`catalog/`) and the model
layers (`staging/`, `intermediate/`, `marts/`, `checks/`) the reconciliation runs in order."""
