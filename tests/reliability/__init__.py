"""Reliability: concurrent processes on one home, and SIGKILL at random moments."""
