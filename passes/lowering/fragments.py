"""Tensor-core accumulator layouts as data: which thread, and which of its
registers, holds each element of the tile an MMA instruction writes.

Like Triton's linear layouts and tinygrad's tensor-core descriptions, a
layout is a description the lowerings read, not arithmetic each of them
repeats: where a thread's first accumulator lies (`thread_origin`), where
each of its registers lies from there (`registers`), which of them share a
row (`rows`, `row_slot`), and how many adjacent columns a thread holds
(`run`). Every NVIDIA accumulator layout so far has the same thread part:
lane l of a warp holds rows l / 4 (and 8 more) at columns 2 (l % 4) and
one more, and the warps issuing one instruction stack 16 rows each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from molten.passes.lowering.emitter import WARP, Emitter, Index

Value = TypeVar("Value")


@dataclass(frozen=True)
class AccumulatorLayout:
    """The f32 accumulators of one MMA kind (or of a tile of several of its
    instructions, `tiled`): thread t of the `warps` x 32 that issue it, lane
    l = t % 32 of warp w = t / 32, holds its register j at

        row = warp_rows w + l / quad + registers[j][0]
        col = pair (l % quad) + registers[j][1]

    of the tile."""

    name: str
    instruction: tuple[int, int, int]
    """M, N and K of one instruction."""
    warps: int
    """Warps issuing one instruction (a warpgroup's four for wgmma)."""
    registers: tuple[tuple[int, int], ...]
    """Each register's (row, column) from the thread's first accumulator."""
    quad: int = 4
    """Lanes over which a row's columns are spread."""
    pair: int = 2
    """Adjacent columns a lane holds: its registers come in runs of this."""
    warp_rows: int = 16
    """Rows between one warp's first accumulator and the next warp's."""
    tiles: tuple[int, int] = (1, 1)
    """Instructions side by side along M and N (`tiled`)."""

    @property
    def run(self) -> int:
        """A thread's accumulators come in runs of this many adjacent columns."""
        return self.pair

    @property
    def rows(self) -> tuple[int, ...]:
        """The rows a thread holds, from its first, in order of register."""
        return tuple(dict.fromkeys(row for row, _ in self.registers))

    def row_slot(self, register: int) -> int:
        """Which of the thread's `rows` register `register` lies in."""
        return self.rows.index(self.registers[register][0])

    def row_registers(self, slot: int) -> list[int]:
        """The registers in row `slot` of the thread's, in order."""
        return [j for j in range(len(self.registers)) if self.row_slot(j) == slot]

    def tiled(self, m: int, n: int) -> AccumulatorLayout:
        """The accumulators of m x n instructions side by side (a warp's tile
        of mma.sync fragments): each instruction's registers after the one's
        before, along N first."""
        assert self.tiles == (1, 1), "a layout of one instruction"
        rows, cols, _ = self.instruction
        registers = tuple(
            (i * rows + row, j * cols + col)
            for i in range(m)
            for j in range(n)
            for row, col in self.registers
        )
        name = f"{self.name} x {m}x{n}"
        return replace(self, name=name, registers=registers, tiles=(m, n))

    def instruction_slice(self, i: int, j: int) -> slice:
        """Where instruction (i, j)'s registers are among a thread's."""
        per = len(self.registers) // (self.tiles[0] * self.tiles[1])
        first = (i * self.tiles[1] + j) * per
        return slice(first, first + per)

    def place(self, thread: int, register: int) -> tuple[int, int]:
        """Where `register` of `thread` lies in the tile (as the docstring
        says, on known values)."""
        warp, lane = divmod(thread, WARP)
        row, col = self.registers[register]
        return (
            warp * self.warp_rows + lane // self.quad + row,
            (lane % self.quad) * self.pair + col,
        )

    def thread_origin(
        self,
        e: Emitter,
        thread: Index,
        rows: tuple[Index, Index],
        cols: tuple[Index, Index],
    ) -> tuple[Index, Index]:
        """The row and column of `thread`'s first accumulator (`thread` counted
        among the instruction's threads: a lane of one warp, or a thread of
        a warpgroup) in a tile at rows[0] + rows[1], cols[0] + cols[1] (a
        block tile's origin and the place in it of the threads' tile)."""
        warp: Index = 0
        lane = thread
        if self.warps > 1:
            warp, lane = e.idiv(thread, WARP), e.irem(thread, WARP)
        row = e.iadd(
            e.iadd(*rows),
            e.iadd(e.imul(warp, self.warp_rows), e.idiv(lane, self.quad)),
        )
        col = e.iadd(e.iadd(*cols), e.imul(e.irem(lane, self.quad), self.pair))
        return row, col

    def places(
        self,
        e: Emitter,
        origin: tuple[Index, Index],
        values: Sequence[Value] | Callable[[int], Value],
    ) -> list[tuple[Index, Index, Value]]:
        """(row, column, value) of each of a thread's registers, from its first
        accumulator's place `origin`; `values` gives each register's value
        (a function of the register: made as its place is). Each row and
        column is made once, so that what the epilogue computes per row
        (a prologue's row reductions) is found once a row."""
        first_row, first_col = origin
        rows: dict[int, Index] = {}
        cols: dict[int, Index] = {}
        placed: list[tuple[Index, Index, Value]] = []
        for j, (row, col) in enumerate(self.registers):
            if row not in rows:
                rows[row] = e.iadd(first_row, row)
            if col not in cols:
                cols[col] = e.iadd(first_col, col)
            value = values(j) if callable(values) else values[j]
            placed.append((rows[row], cols[col], value))
        return placed


MMA_M16N8K16 = AccumulatorLayout(
    "mma.sync m16n8k16",
    (16, 8, 16),
    warps=1,
    registers=((0, 0), (0, 1), (8, 0), (8, 1)),
)
"""mma.sync m16n8k16's C fragment: c0, c1 at row l / 4, c2, c3 eight below."""
MMA_M16N8K8 = replace(MMA_M16N8K16, name="mma.sync m16n8k8", instruction=(16, 8, 8))
"""mma.sync m16n8k8's (tf32 operands): the same C fragment."""


def wgmma_m64(n: int) -> AccumulatorLayout:
    """wgmma m64nNk16's accumulators: each warp of the warpgroup holds 16
    rows of the 64, as N / 8 mma.sync fragments side by side (register j
    at row 8 ((j / 2) % 2), column 8 (j / 4) + j % 2 from its first)."""
    fragments = MMA_M16N8K16.tiled(1, n // 8)
    return AccumulatorLayout(
        f"wgmma m64n{n}k16", (64, n, 16), warps=4, registers=fragments.registers
    )
