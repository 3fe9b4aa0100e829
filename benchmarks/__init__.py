"""Molten's benchmark harness: Molten against PyTorch eager, torch.compile and
the memory roofline, in one run on one GPU (`python -m benchmarks`).

`cases` defines the suites (the math once for Molten, once for PyTorch),
`timing` how a call is timed, `harness` checks and times a suite, `report`
writes, compares and plots results. See `benchmarks/README.md`.
"""
