"""The language server: LSP in and out, over stdio or TCP. No analysis lives here."""
