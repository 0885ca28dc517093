"""Priming (spec 001, 自動想起): what matters now, injected before every prompt."""
