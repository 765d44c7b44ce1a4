"""Test data: the outcome table (which data gives which result) and faker-based payers and orders."""
