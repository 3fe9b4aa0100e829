"""`transpose-matvec`: a matrix times a column vector as the GEMV of its
transpose.

A matmul of one output column (N = 1) and more rows than a GEMV takes
(A [M, K] @ b [K, 1], torch.matmul(A, b) with M large) would run as a
tiled gemm whose tiles are almost all padding. Its transpose, the row
bᵀ [1, K] times A read as a weight stored [N, K] (Aᵀ), is a GEMV: one
warp a row of A, each element of A read once, at the memory roofline.

    %y = molten.matmul %a, %b : (tensor<2048x4096xf32>, tensor<4096x1xf32>)
        -> tensor<2048x1xf32>

becomes

    %row = molten.reshape %b : tensor<4096x1xf32> -> tensor<1x4096xf32>
    %yt = molten.matmul %row, %a transpose_b
        : (tensor<1x4096xf32>, tensor<2048x4096xf32>) -> tensor<1x2048xf32>
    %y = molten.reshape %yt : tensor<1x2048xf32> -> tensor<2048x1xf32>

(reshapes only: a vector is the same memory as a row or a column). Batched
products and named sizes are left as they are.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from molten.dialects import molten
from molten.dialects.molten import value_dims
from molten.passes.schedule.common import GEMV_MAX_M


class MatvecAsGemv(RewritePattern):
    """matmul(A, b) of one column -> reshape(matmul(bᵀ, Aᵀ))."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: molten.MatmulOp, rewriter: PatternRewriter):
        result = value_dims(op.result)
        if len(result) != 2 or not all(isinstance(d, int) for d in result):
            return
        m, n = result
        if n != 1 or m <= GEMV_MAX_M:
            return
        vector_type = op.rhs.type
        k = value_dims(op.rhs)[-1 if op.transpose_b else 0]
        new_ops: list[Operation] = []
        row = op.rhs
        if op.transpose_b is None:  # b stored [K, 1]: the same memory as [1, K]
            reshape = molten.ReshapeOp.with_inferred_type(
                [row], result_type=molten.tensor_type([1, k], vector_type.element_type)
            )
            new_ops.append(reshape)
            row = reshape.results[0]
            row.name_hint = f"{op.rhs.name_hint or 'b'}_row"
        # A stored [M, K] is the weight stored [N, K] (transpose_b); A
        # stored [K, M] (transpose_a) is the weight stored [K, N].
        product = molten.MatmulOp.with_inferred_type(
            [row, op.lhs],
            {"transpose_b": UnitAttr()} if op.transpose_a is None else {},
            molten.tensor_type([1, m], op.result.type.element_type),
        )
        back = molten.ReshapeOp.with_inferred_type(
            [product.results[0]], result_type=op.result.type
        )
        new_ops += [product, back]
        name = op.result.name_hint or "y"
        product.results[0].name_hint = f"{name}_t"
        back.results[0].name_hint = name
        rewriter.replace(op, new_ops, [back.results[0]])


@dataclass(frozen=True)
class TransposeMatvec(ModulePass):
    """Rewrites matrix times column vector products into GEMVs of their
    transposes."""

    name = "transpose-matvec"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(MatvecAsGemv(), apply_recursively=False).rewrite_module(op)
