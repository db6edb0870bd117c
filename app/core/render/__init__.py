"""Rendering replies: ``markdown/`` (incremental markdown to HTML), code highlighting with its lexer pool, formulas,
plain-text previews, the deadline worker pool."""
