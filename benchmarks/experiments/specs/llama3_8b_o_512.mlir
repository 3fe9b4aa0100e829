builtin.module {
  func.func @llama3_8b_o_x_w_T_r_512x4096x4096_bf16(%x: tensor<512x4096xbf16>, %w: tensor<4096x4096xbf16>, %r: tensor<512x4096xbf16>) -> (tensor<512x4096xbf16> {molten.name = "out0"}) {
    %0 = molten.matmul %x, %w transpose_b : (tensor<512x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<512x4096xbf16>
    %1 = molten.add %0, %r : (tensor<512x4096xbf16>, tensor<512x4096xbf16>) -> tensor<512x4096xbf16>
    func.return %1 : tensor<512x4096xbf16>
  }
}
