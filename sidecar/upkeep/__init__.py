"""Keeping the store in bounds: what it holds (du, stats), retention policies (prune), the trash and blobs."""
