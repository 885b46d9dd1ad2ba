"""Diagnostics for people: rule codes and names, collection from every layer, and output formats."""
