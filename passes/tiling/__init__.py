"""Tilings: what the `tile` pass derives from a kernel's schedule, per family:
`gemm.tiling_for` (on the polyhedral model, `polyhedral.py`) and
`attention.attention_tiling`."""
