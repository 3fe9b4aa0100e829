"""A program's TMA tensor maps, encoded on the host for a call's pointers."""

from __future__ import annotations

from typing import Any

from molten.runtime import program as steps
from molten.runtime.device import _driver, check
from molten.runtime.program import ITEMSIZES


class PreparedTensorMap:
    """A launcher's tensor map, encoded on the host for the matrix at a device
    pointer (again only when the pointer changes); its slot holds the
    address of the map's 128 bytes, which a launch passes by value."""

    def __init__(self, step: steps.TensorMap):
        self.step = step
        self._source: int | None = None
        self._map: Any = None
        driver = _driver()
        types = driver.CUtensorMapDataType
        self._type = (
            types.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
            if step.dtype == "bfloat16"
            else types.CU_TENSOR_MAP_DATA_TYPE_FLOAT16
        )
        self._zeros = driver.CUtensorMap()

    def encode(self, source: int) -> int:
        """The address of the map of the matrix at `source` (zeros where the
        pointer is not 16-byte aligned: the launch then takes the variant for
        misaligned pointers, which does not read it)."""
        if source == self._source:
            return int(self._map.getPtr())
        if source % 16:
            self._source, self._map = source, self._zeros
            return int(self._map.getPtr())
        driver = _driver()
        (rows, cols), (box_rows, box_cols) = self.step.shape, self.step.box
        itemsize = ITEMSIZES[self.step.dtype]
        self._map = check(
            driver.cuTensorMapEncodeTiled(
                self._type,
                2,
                source,
                [driver.cuuint64_t(cols), driver.cuuint64_t(rows)],
                [driver.cuuint64_t(cols * itemsize)],
                [driver.cuuint32_t(box_cols), driver.cuuint32_t(box_rows)],
                [driver.cuuint32_t(1), driver.cuuint32_t(1)],
                driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
                driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
                driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            ),
            "encoding a TMA tensor map",
        )
        self._source = source
        return int(self._map.getPtr())
