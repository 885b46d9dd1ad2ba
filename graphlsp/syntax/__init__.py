"""Text -> positioned syntax tree: grammar loading, lexing, parsing with recovery, incremental reparse."""
