"""Deliberate recall (spec 001, 意図的想起): the tools an agent calls on purpose."""
