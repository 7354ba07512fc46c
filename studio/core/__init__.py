"""The hook contracts, targets and records as pure Python; nothing here imports Qt."""
