"""Pure domain code: the memory model and the math. No I/O, no clock, no environment."""
