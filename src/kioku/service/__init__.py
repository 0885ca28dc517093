"""The service layer: the Kioku orchestrator."""
