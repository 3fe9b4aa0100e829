// RMSNorm over any number of tokens T: one compile, a launcher that takes T.
//   molten compile examples/rmsnorm_any_tokens.mlir -o examples/
func.func @rmsnorm_any_tokens(%x: tensor<?x5120xf32, ["T"]>, %w: tensor<5120xf32>) -> (tensor<?x5120xf32, ["T"]> {molten.name = "norm"}) {
  %norm = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<?x5120xf32, ["T"]>, tensor<5120xf32>) -> tensor<?x5120xf32, ["T"]>
  func.return %norm : tensor<?x5120xf32, ["T"]>
}
