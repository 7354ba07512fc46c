"""Runs hooks in isolated worker processes; pure Python and asyncio, nothing here imports Qt."""
