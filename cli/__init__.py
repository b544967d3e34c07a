"""The `linksim` command line."""
