"""The HSS release: rows, the hub and local copies, the demo set, Inspect samples."""
