"""The `hss-inspect` command: one module per subcommand, the work lives in the rooms below."""
