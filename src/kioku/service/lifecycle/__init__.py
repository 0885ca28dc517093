"""The lifecycle of memories: the nightly batch and its schedule, the lifecycle log, and the
batch replayed on a throwaway store (``simulate``)."""
