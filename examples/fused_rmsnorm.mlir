// The seed RMSNorm as textual IR: molten-opt examples/fused_rmsnorm.mlir -p molten-decompose
func.func @fused_rmsnorm(%x: tensor<2048x5120xf32>, %w: tensor<5120xf32>) -> (tensor<2048x5120xf32> {molten.name = "norm"}) {
  %norm = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<2048x5120xf32>, tensor<5120xf32>) -> tensor<2048x5120xf32>
  func.return %norm : tensor<2048x5120xf32>
}
