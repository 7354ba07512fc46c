"""Hook Studio: edit, run and debug LLM request hooks."""

__version__ = "0.1.0"
