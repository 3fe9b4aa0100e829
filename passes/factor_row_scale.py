"""`factor-row-scale`: a scale constant along K moved out of a matmul's lhs.

A product whose lhs is a chain of multiplications, some of whose factors
are constant along the contraction axis K (a row scale R, shaped
[..., M, 1], or a scalar), is the product of the other factors, scaled
by R afterwards:

    (X * R * C) @ W  =  R * ((X * C) @ W)

rms_norm(x, w) @ W decomposes to exactly such a product (R = rsqrt(mean(x²)
+ eps), C = w), and after this pass the normalized activations are never
needed as a tensor: R becomes the matmul's epilogue, and the sum of
squares a reduction over the same rows of x that the gemm reads (the
prologue fusion that a later pass builds on it).

```mlir
%s = molten.mul %x, %r : (tensor<4x64xf32>, tensor<4x1xf32>) -> tensor<4x64xf32>
%h = molten.mul %s, %w : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
%a = molten.cast %h : tensor<4x64xf32> -> tensor<4x64xbf16>
%y = molten.matmul %a, %b : (tensor<4x64xbf16>, tensor<64x8xbf16>) -> tensor<4x8xbf16>
```

becomes

```mlir
%h = molten.mul %x, %w : (tensor<4x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
%a = molten.cast %h : tensor<4x64xf32> -> tensor<4x64xbf16>
%p = molten.matmul %a, %b : (tensor<4x64xbf16>, tensor<64x8xbf16>) -> tensor<4x8xf32>
%q = molten.mul %p, %r : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
%y = molten.cast %q : tensor<4x8xf32> -> tensor<4x8xbf16>
```

The narrow product is kept in f32 (the accumulators) until the scale is
applied, so the result is rounded once, as before. It applies only where
every use of the lhs is as such a matmul's lhs (otherwise the normalized
tensor is needed anyway), and not to f16: X * C unscaled may overflow
f16's range where the scaled product does not (bf16 has f32's range).
"""

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Float16Type, Float32Type, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import molten
from molten.dialects.molten import shape_of
from molten.passes.decompose import OpSequence


def _factors(value: SSAValue) -> list[SSAValue]:
    """The factors of a chain of molten.mul ending in `value`: a mul used
    only in the chain is opened, anything else is a factor."""
    op = value.owner
    if not isinstance(op, molten.MulOp) or value.has_more_than_one_use():
        return [value]
    return _factors(op.lhs) + _factors(op.rhs)


def _constant_along_k(factor: SSAValue) -> bool:
    """Whether a factor broadcasts along the last (K) axis: size 1 there,
    or a scalar."""
    shape = shape_of(factor)
    return not shape or shape[-1] == 1


def _broadcast(values: list[SSAValue]) -> tuple[int, ...]:
    """The shape the values broadcast to (numpy's rule, the molten ops')."""
    return tuple(np.broadcast_shapes(*(tuple(shape_of(v)) for v in values)))


def _product(seq: OpSequence, factors: list[SSAValue]) -> SSAValue:
    """factors[0] * factors[1] * ..., the muls added to `seq`."""
    value = factors[0]
    for factor in factors[1:]:
        value = seq(molten.MulOp, value, factor)
    return value


def _only_matmul_lhs(value: SSAValue) -> bool:
    """Whether every use of `value` is as the (not transposed) lhs of a
    matmul."""
    return all(
        isinstance(use.operation, molten.MatmulOp)
        and use.index == 0
        and use.operation.transpose_a is None
        for use in value.uses
    )


def factor_row_scale(
    op: molten.MatmulOp, rewriter: PatternRewriter
) -> dict[Operation, molten.MatmulOp]:
    """Moves the row scale out of `op`'s lhs, for every matmul of that lhs
    at once (they then share the unscaled lhs, as siblings do); each
    replaced matmul's new one, or none where the lhs is not such a
    product."""
    if op.transpose_a is not None or not _only_matmul_lhs(op.lhs):
        return {}
    lhs_type = op.lhs.type
    assert isinstance(lhs_type, TensorType)
    if isinstance(lhs_type.element_type, Float16Type):
        return {}
    cast = op.lhs.owner
    scaled = cast.input if isinstance(cast, molten.CastOp) else op.lhs
    if isinstance(cast, molten.CastOp) and scaled.has_more_than_one_use():
        return {}
    root = scaled.owner
    if not isinstance(root, molten.MulOp):
        return {}
    # The root is opened whatever its uses: they were checked above.
    factors = _factors(root.lhs) + _factors(root.rhs)
    scales = [f for f in factors if _constant_along_k(f)]
    kept = [f for f in factors if not _constant_along_k(f)]
    if not scales or not kept:
        return {}
    if _broadcast(kept) != tuple(shape_of(scaled)):
        # A scale brings an axis that X * C lacks: the product of X * C
        # would have another shape. (A scale broadcasts into the result:
        # its last axis is 1 and its others are the lhs's.)
        return {}
    block = op.parent_block()
    assert block is not None
    order = {o: i for i, o in enumerate(block.ops)}
    matmuls = sorted({use.operation for use in op.lhs.uses}, key=order.__getitem__)
    # The first matmul's ops start with the shared lhs; each goes where
    # its matmul was.
    seq = OpSequence()
    unscaled = _product(seq, kept)
    lhs = seq.cast(unscaled, lhs_type.element_type)
    for made in (unscaled, lhs):
        if made.owner in seq.ops:  # not a value of the graph's own
            made.name_hint = "unscaled"
    products: dict[Operation, molten.MatmulOp] = {}
    for matmul in matmuls:
        assert isinstance(matmul, molten.MatmulOp)
        result_type = matmul.result.type
        assert isinstance(result_type, TensorType)
        wide = TensorType(Float32Type(), result_type.get_shape())
        product = seq(
            molten.MatmulOp, lhs, matmul.rhs, result_type=wide, **matmul.properties
        )
        product.name_hint = "unscaled_product"
        products[matmul] = product.owner  # type: ignore[assignment]
        wide_scales = [seq.cast(s, wide.element_type) for s in scales]
        value = _product(seq, [product, *wide_scales])
        value = seq.cast(value, result_type.element_type)
        rewriter.replace(matmul, seq.ops, [value])
        seq = OpSequence()
    return products


class FactorRowScale(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.MatmulOp, rewriter: PatternRewriter):
        factor_row_scale(op, rewriter)


@dataclass(frozen=True)
class FactorRowScalePass(ModulePass):
    """Moves a matmul lhs's factors that are constant along K (a row scale)
    after the product (see the module docstring)."""

    name = "factor-row-scale"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FactorRowScale(), apply_recursively=False).rewrite_module(
            op
        )
