"""Output targets: the `-t cuda` translation unit and its header."""
