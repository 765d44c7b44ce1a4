"""Hosts made on one machine with network namespaces: the team simulator deployed across them."""
