// RUN: MOLTEN_ROUNDTRIP
// RUN: MOLTEN_GENERIC_ROUNDTRIP
// RUN: MOLTEN_CUSTOM_ROUNDTRIP

// Every molten op, in its custom form (CHECK) and its generic form
// (CHECK-GENERIC), on f32, f16 and bf16 tensors.

func.func @binary_f32(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>) {
// CHECK-LABEL: func.func @binary_f32(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "binary_f32"
// CHECK-GENERIC-NEXT: ^bb0(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>):
  %0 = molten.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %0 = molten.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %0 = "molten.add"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = molten.sub %b, %a : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %1 = molten.sub %b, %a : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %1 = "molten.sub"(%b, %a) : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = molten.mul %a, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-NEXT: %2 = molten.mul %a, %s : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %2 = "molten.mul"(%a, %s) : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = molten.div %s, %b : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-NEXT: %3 = molten.div %s, %b : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
// CHECK-GENERIC-NEXT: %3 = "molten.div"(%s, %b) : (tensor<f32>, tensor<8xf32>) -> tensor<8xf32>
  %4 = molten.max %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %4 = molten.max %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %4 = "molten.max"(%a, %a) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = molten.min %s, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %5 = molten.min %s, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK-GENERIC-NEXT: %5 = "molten.min"(%s, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %6 = molten.pow %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %6 = molten.pow %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %6 = "molten.pow"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @binary_f16(%a: tensor<2x1x8xf16>, %b: tensor<3x1xf16>) {
// CHECK-LABEL: func.func @binary_f16(%a: tensor<2x1x8xf16>, %b: tensor<3x1xf16>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "binary_f16"
// CHECK-GENERIC-NEXT: ^bb0(%a: tensor<2x1x8xf16>, %b: tensor<3x1xf16>):
  %0 = molten.add %a, %b : (tensor<2x1x8xf16>, tensor<3x1xf16>) -> tensor<2x3x8xf16>
// CHECK-NEXT: %0 = molten.add %a, %b : (tensor<2x1x8xf16>, tensor<3x1xf16>) -> tensor<2x3x8xf16>
// CHECK-GENERIC-NEXT: %0 = "molten.add"(%a, %b) : (tensor<2x1x8xf16>, tensor<3x1xf16>) -> tensor<2x3x8xf16>
  %1 = molten.sub %a, %b : (tensor<2x1x8xf16>, tensor<3x1xf16>) -> tensor<2x3x8xf16>
// CHECK-NEXT: %1 = molten.sub %a, %b : (tensor<2x1x8xf16>, tensor<3x1xf16>) -> tensor<2x3x8xf16>
// CHECK-GENERIC-NEXT: %1 = "molten.sub"(%a, %b) : (tensor<2x1x8xf16>, tensor<3x1xf16>) -> tensor<2x3x8xf16>
  %2 = molten.mul %b, %a : (tensor<3x1xf16>, tensor<2x1x8xf16>) -> tensor<2x3x8xf16>
// CHECK-NEXT: %2 = molten.mul %b, %a : (tensor<3x1xf16>, tensor<2x1x8xf16>) -> tensor<2x3x8xf16>
// CHECK-GENERIC-NEXT: %2 = "molten.mul"(%b, %a) : (tensor<3x1xf16>, tensor<2x1x8xf16>) -> tensor<2x3x8xf16>
  %3 = molten.div %a, %a : (tensor<2x1x8xf16>, tensor<2x1x8xf16>) -> tensor<2x1x8xf16>
// CHECK-NEXT: %3 = molten.div %a, %a : (tensor<2x1x8xf16>, tensor<2x1x8xf16>) -> tensor<2x1x8xf16>
// CHECK-GENERIC-NEXT: %3 = "molten.div"(%a, %a) : (tensor<2x1x8xf16>, tensor<2x1x8xf16>) -> tensor<2x1x8xf16>
  %4 = molten.max %a, %b : (tensor<2x1x8xf16>, tensor<3x1xf16>) -> tensor<2x3x8xf16>
// CHECK-NEXT: %4 = molten.max %a, %b : (tensor<2x1x8xf16>, tensor<3x1xf16>) -> tensor<2x3x8xf16>
// CHECK-GENERIC-NEXT: %4 = "molten.max"(%a, %b) : (tensor<2x1x8xf16>, tensor<3x1xf16>) -> tensor<2x3x8xf16>
  %5 = molten.min %b, %b : (tensor<3x1xf16>, tensor<3x1xf16>) -> tensor<3x1xf16>
// CHECK-NEXT: %5 = molten.min %b, %b : (tensor<3x1xf16>, tensor<3x1xf16>) -> tensor<3x1xf16>
// CHECK-GENERIC-NEXT: %5 = "molten.min"(%b, %b) : (tensor<3x1xf16>, tensor<3x1xf16>) -> tensor<3x1xf16>
  %6 = molten.pow %b, %a : (tensor<3x1xf16>, tensor<2x1x8xf16>) -> tensor<2x3x8xf16>
// CHECK-NEXT: %6 = molten.pow %b, %a : (tensor<3x1xf16>, tensor<2x1x8xf16>) -> tensor<2x3x8xf16>
// CHECK-GENERIC-NEXT: %6 = "molten.pow"(%b, %a) : (tensor<3x1xf16>, tensor<2x1x8xf16>) -> tensor<2x3x8xf16>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @binary_bf16(%a: tensor<16xbf16>, %s: tensor<bf16>) {
// CHECK-LABEL: func.func @binary_bf16(%a: tensor<16xbf16>, %s: tensor<bf16>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "binary_bf16"
// CHECK-GENERIC-NEXT: ^bb0(%a: tensor<16xbf16>, %s: tensor<bf16>):
  %0 = molten.add %s, %a : (tensor<bf16>, tensor<16xbf16>) -> tensor<16xbf16>
// CHECK-NEXT: %0 = molten.add %s, %a : (tensor<bf16>, tensor<16xbf16>) -> tensor<16xbf16>
// CHECK-GENERIC-NEXT: %0 = "molten.add"(%s, %a) : (tensor<bf16>, tensor<16xbf16>) -> tensor<16xbf16>
  %1 = molten.sub %a, %s : (tensor<16xbf16>, tensor<bf16>) -> tensor<16xbf16>
// CHECK-NEXT: %1 = molten.sub %a, %s : (tensor<16xbf16>, tensor<bf16>) -> tensor<16xbf16>
// CHECK-GENERIC-NEXT: %1 = "molten.sub"(%a, %s) : (tensor<16xbf16>, tensor<bf16>) -> tensor<16xbf16>
  %2 = molten.mul %a, %a : (tensor<16xbf16>, tensor<16xbf16>) -> tensor<16xbf16>
// CHECK-NEXT: %2 = molten.mul %a, %a : (tensor<16xbf16>, tensor<16xbf16>) -> tensor<16xbf16>
// CHECK-GENERIC-NEXT: %2 = "molten.mul"(%a, %a) : (tensor<16xbf16>, tensor<16xbf16>) -> tensor<16xbf16>
  %3 = molten.div %a, %s : (tensor<16xbf16>, tensor<bf16>) -> tensor<16xbf16>
// CHECK-NEXT: %3 = molten.div %a, %s : (tensor<16xbf16>, tensor<bf16>) -> tensor<16xbf16>
// CHECK-GENERIC-NEXT: %3 = "molten.div"(%a, %s) : (tensor<16xbf16>, tensor<bf16>) -> tensor<16xbf16>
  %4 = molten.max %s, %a : (tensor<bf16>, tensor<16xbf16>) -> tensor<16xbf16>
// CHECK-NEXT: %4 = molten.max %s, %a : (tensor<bf16>, tensor<16xbf16>) -> tensor<16xbf16>
// CHECK-GENERIC-NEXT: %4 = "molten.max"(%s, %a) : (tensor<bf16>, tensor<16xbf16>) -> tensor<16xbf16>
  %5 = molten.min %a, %s : (tensor<16xbf16>, tensor<bf16>) -> tensor<16xbf16>
// CHECK-NEXT: %5 = molten.min %a, %s : (tensor<16xbf16>, tensor<bf16>) -> tensor<16xbf16>
// CHECK-GENERIC-NEXT: %5 = "molten.min"(%a, %s) : (tensor<16xbf16>, tensor<bf16>) -> tensor<16xbf16>
  %6 = molten.pow %s, %s : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
// CHECK-NEXT: %6 = molten.pow %s, %s : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
// CHECK-GENERIC-NEXT: %6 = "molten.pow"(%s, %s) : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @unary_f32(%x: tensor<4x8xf32>) {
// CHECK-LABEL: func.func @unary_f32(%x: tensor<4x8xf32>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "unary_f32"
// CHECK-GENERIC-NEXT: ^bb0(%x: tensor<4x8xf32>):
  %0 = molten.neg %x : tensor<4x8xf32>
// CHECK-NEXT: %0 = molten.neg %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %0 = "molten.neg"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = molten.abs %x : tensor<4x8xf32>
// CHECK-NEXT: %1 = molten.abs %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %1 = "molten.abs"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = molten.exp %x : tensor<4x8xf32>
// CHECK-NEXT: %2 = molten.exp %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %2 = "molten.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = molten.log %x : tensor<4x8xf32>
// CHECK-NEXT: %3 = molten.log %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %3 = "molten.log"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = molten.sqrt %x : tensor<4x8xf32>
// CHECK-NEXT: %4 = molten.sqrt %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %4 = "molten.sqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = molten.rsqrt %x : tensor<4x8xf32>
// CHECK-NEXT: %5 = molten.rsqrt %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %5 = "molten.rsqrt"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = molten.reciprocal %x : tensor<4x8xf32>
// CHECK-NEXT: %6 = molten.reciprocal %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %6 = "molten.reciprocal"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %7 = molten.square %x : tensor<4x8xf32>
// CHECK-NEXT: %7 = molten.square %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %7 = "molten.square"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %8 = molten.tanh %x : tensor<4x8xf32>
// CHECK-NEXT: %8 = molten.tanh %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %8 = "molten.tanh"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = molten.sigmoid %x : tensor<4x8xf32>
// CHECK-NEXT: %9 = molten.sigmoid %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %9 = "molten.sigmoid"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %10 = molten.relu %x : tensor<4x8xf32>
// CHECK-NEXT: %10 = molten.relu %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %10 = "molten.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %11 = molten.gelu %x : tensor<4x8xf32>
// CHECK-NEXT: %11 = molten.gelu %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %11 = "molten.gelu"(%x) <{approximate = "none"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %12 = molten.gelu %x approximate = "tanh" : tensor<4x8xf32>
// CHECK-NEXT: %12 = molten.gelu %x approximate = "tanh" : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %12 = "molten.gelu"(%x) <{approximate = "tanh"}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %13 = molten.silu %x : tensor<4x8xf32>
// CHECK-NEXT: %13 = molten.silu %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %13 = "molten.silu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %14 = molten.rotate_half %x : tensor<4x8xf32>
// CHECK-NEXT: %14 = molten.rotate_half %x : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %14 = "molten.rotate_half"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %u = molten.triu %x diagonal = 1 : tensor<4x8xf32>
// CHECK-NEXT: %u = molten.triu %x diagonal = 1 : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %u = "molten.triu"(%x) <{diagonal = 1 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %l = molten.tril %x diagonal = -2 : tensor<4x8xf32>
// CHECK-NEXT: %l = molten.tril %x diagonal = -2 : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %l = "molten.tril"(%x) <{diagonal = -2 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @unary_f16(%x: tensor<2x3x16xf16>) {
// CHECK-LABEL: func.func @unary_f16(%x: tensor<2x3x16xf16>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "unary_f16"
// CHECK-GENERIC-NEXT: ^bb0(%x: tensor<2x3x16xf16>):
  %0 = molten.neg %x : tensor<2x3x16xf16>
// CHECK-NEXT: %0 = molten.neg %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %0 = "molten.neg"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %1 = molten.abs %x : tensor<2x3x16xf16>
// CHECK-NEXT: %1 = molten.abs %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %1 = "molten.abs"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %2 = molten.exp %x : tensor<2x3x16xf16>
// CHECK-NEXT: %2 = molten.exp %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %2 = "molten.exp"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %3 = molten.log %x : tensor<2x3x16xf16>
// CHECK-NEXT: %3 = molten.log %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %3 = "molten.log"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %4 = molten.sqrt %x : tensor<2x3x16xf16>
// CHECK-NEXT: %4 = molten.sqrt %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %4 = "molten.sqrt"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %5 = molten.rsqrt %x : tensor<2x3x16xf16>
// CHECK-NEXT: %5 = molten.rsqrt %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %5 = "molten.rsqrt"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %6 = molten.reciprocal %x : tensor<2x3x16xf16>
// CHECK-NEXT: %6 = molten.reciprocal %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %6 = "molten.reciprocal"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %7 = molten.square %x : tensor<2x3x16xf16>
// CHECK-NEXT: %7 = molten.square %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %7 = "molten.square"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %8 = molten.tanh %x : tensor<2x3x16xf16>
// CHECK-NEXT: %8 = molten.tanh %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %8 = "molten.tanh"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %9 = molten.sigmoid %x : tensor<2x3x16xf16>
// CHECK-NEXT: %9 = molten.sigmoid %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %9 = "molten.sigmoid"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %10 = molten.relu %x : tensor<2x3x16xf16>
// CHECK-NEXT: %10 = molten.relu %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %10 = "molten.relu"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %11 = molten.gelu %x approximate = "none" : tensor<2x3x16xf16>
// CHECK-NEXT: %11 = molten.gelu %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %11 = "molten.gelu"(%x) <{approximate = "none"}> : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %12 = molten.gelu %x approximate = "tanh" : tensor<2x3x16xf16>
// CHECK-NEXT: %12 = molten.gelu %x approximate = "tanh" : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %12 = "molten.gelu"(%x) <{approximate = "tanh"}> : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %13 = molten.silu %x : tensor<2x3x16xf16>
// CHECK-NEXT: %13 = molten.silu %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %13 = "molten.silu"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  %14 = molten.rotate_half %x : tensor<2x3x16xf16>
// CHECK-NEXT: %14 = molten.rotate_half %x : tensor<2x3x16xf16>
// CHECK-GENERIC-NEXT: %14 = "molten.rotate_half"(%x) : (tensor<2x3x16xf16>) -> tensor<2x3x16xf16>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @unary_bf16(%x: tensor<64xbf16>, %s: tensor<bf16>) {
// CHECK-LABEL: func.func @unary_bf16(%x: tensor<64xbf16>, %s: tensor<bf16>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "unary_bf16"
// CHECK-GENERIC-NEXT: ^bb0(%x: tensor<64xbf16>, %s: tensor<bf16>):
  %0 = molten.neg %s : tensor<bf16>
// CHECK-NEXT: %0 = molten.neg %s : tensor<bf16>
// CHECK-GENERIC-NEXT: %0 = "molten.neg"(%s) : (tensor<bf16>) -> tensor<bf16>
  %1 = molten.abs %x : tensor<64xbf16>
// CHECK-NEXT: %1 = molten.abs %x : tensor<64xbf16>
// CHECK-GENERIC-NEXT: %1 = "molten.abs"(%x) : (tensor<64xbf16>) -> tensor<64xbf16>
  %2 = molten.exp %s : tensor<bf16>
// CHECK-NEXT: %2 = molten.exp %s : tensor<bf16>
// CHECK-GENERIC-NEXT: %2 = "molten.exp"(%s) : (tensor<bf16>) -> tensor<bf16>
  %3 = molten.log %x : tensor<64xbf16>
// CHECK-NEXT: %3 = molten.log %x : tensor<64xbf16>
// CHECK-GENERIC-NEXT: %3 = "molten.log"(%x) : (tensor<64xbf16>) -> tensor<64xbf16>
  %4 = molten.sqrt %s : tensor<bf16>
// CHECK-NEXT: %4 = molten.sqrt %s : tensor<bf16>
// CHECK-GENERIC-NEXT: %4 = "molten.sqrt"(%s) : (tensor<bf16>) -> tensor<bf16>
  %5 = molten.rsqrt %x : tensor<64xbf16>
// CHECK-NEXT: %5 = molten.rsqrt %x : tensor<64xbf16>
// CHECK-GENERIC-NEXT: %5 = "molten.rsqrt"(%x) : (tensor<64xbf16>) -> tensor<64xbf16>
  %6 = molten.reciprocal %s : tensor<bf16>
// CHECK-NEXT: %6 = molten.reciprocal %s : tensor<bf16>
// CHECK-GENERIC-NEXT: %6 = "molten.reciprocal"(%s) : (tensor<bf16>) -> tensor<bf16>
  %7 = molten.square %x : tensor<64xbf16>
// CHECK-NEXT: %7 = molten.square %x : tensor<64xbf16>
// CHECK-GENERIC-NEXT: %7 = "molten.square"(%x) : (tensor<64xbf16>) -> tensor<64xbf16>
  %8 = molten.tanh %s : tensor<bf16>
// CHECK-NEXT: %8 = molten.tanh %s : tensor<bf16>
// CHECK-GENERIC-NEXT: %8 = "molten.tanh"(%s) : (tensor<bf16>) -> tensor<bf16>
  %9 = molten.sigmoid %x : tensor<64xbf16>
// CHECK-NEXT: %9 = molten.sigmoid %x : tensor<64xbf16>
// CHECK-GENERIC-NEXT: %9 = "molten.sigmoid"(%x) : (tensor<64xbf16>) -> tensor<64xbf16>
  %10 = molten.relu %s : tensor<bf16>
// CHECK-NEXT: %10 = molten.relu %s : tensor<bf16>
// CHECK-GENERIC-NEXT: %10 = "molten.relu"(%s) : (tensor<bf16>) -> tensor<bf16>
  %11 = molten.gelu %x : tensor<64xbf16>
// CHECK-NEXT: %11 = molten.gelu %x : tensor<64xbf16>
// CHECK-GENERIC-NEXT: %11 = "molten.gelu"(%x) <{approximate = "none"}> : (tensor<64xbf16>) -> tensor<64xbf16>
  %12 = molten.gelu %s approximate = "tanh" : tensor<bf16>
// CHECK-NEXT: %12 = molten.gelu %s approximate = "tanh" : tensor<bf16>
// CHECK-GENERIC-NEXT: %12 = "molten.gelu"(%s) <{approximate = "tanh"}> : (tensor<bf16>) -> tensor<bf16>
  %13 = molten.silu %x : tensor<64xbf16>
// CHECK-NEXT: %13 = molten.silu %x : tensor<64xbf16>
// CHECK-GENERIC-NEXT: %13 = "molten.silu"(%x) : (tensor<64xbf16>) -> tensor<64xbf16>
  %14 = molten.rotate_half %x : tensor<64xbf16>
// CHECK-NEXT: %14 = molten.rotate_half %x : tensor<64xbf16>
// CHECK-GENERIC-NEXT: %14 = "molten.rotate_half"(%x) : (tensor<64xbf16>) -> tensor<64xbf16>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @cast(%x: tensor<4x8xf32>, %s: tensor<bf16>) {
// CHECK-LABEL: func.func @cast(%x: tensor<4x8xf32>, %s: tensor<bf16>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "cast"
// CHECK-GENERIC-NEXT: ^bb0(%x: tensor<4x8xf32>, %s: tensor<bf16>):
  %0 = molten.cast %x : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %0 = molten.cast %x : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-GENERIC-NEXT: %0 = "molten.cast"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  %1 = molten.cast %0 : tensor<4x8xf16> to tensor<4x8xbf16>
// CHECK-NEXT: %1 = molten.cast %0 : tensor<4x8xf16> to tensor<4x8xbf16>
// CHECK-GENERIC-NEXT: %1 = "molten.cast"(%0) : (tensor<4x8xf16>) -> tensor<4x8xbf16>
  %2 = molten.cast %1 : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-NEXT: %2 = molten.cast %1 : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %2 = "molten.cast"(%1) : (tensor<4x8xbf16>) -> tensor<4x8xf32>
  %3 = molten.cast %s : tensor<bf16> to tensor<f32>
// CHECK-NEXT: %3 = molten.cast %s : tensor<bf16> to tensor<f32>
// CHECK-GENERIC-NEXT: %3 = "molten.cast"(%s) : (tensor<bf16>) -> tensor<f32>
  %4 = molten.cast %x : tensor<4x8xf32> to tensor<4x8xf32>
// CHECK-NEXT: %4 = molten.cast %x : tensor<4x8xf32> to tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %4 = "molten.cast"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @constant() {
// CHECK-LABEL: func.func @constant() {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "constant"
  %0 = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT: %0 = molten.constant dense<1.000000e-06> : tensor<f32>
// CHECK-GENERIC-NEXT: %0 = "molten.constant"() <{value = dense<1.000000e-06> : tensor<f32>}> : () -> tensor<f32>
  %1 = molten.constant dense<-2.5> : tensor<bf16>
// CHECK-NEXT: %1 = molten.constant dense<-2.500000e+00> : tensor<bf16>
// CHECK-GENERIC-NEXT: %1 = "molten.constant"() <{value = dense<-2.500000e+00> : tensor<bf16>}> : () -> tensor<bf16>
  %2 = molten.constant dense<0.5> : tensor<f16>
// CHECK-NEXT: %2 = molten.constant dense<5.000000e-01> : tensor<f16>
// CHECK-GENERIC-NEXT: %2 = "molten.constant"() <{value = dense<5.000000e-01> : tensor<f16>}> : () -> tensor<f16>
  %3 = molten.constant dense<7.0> : tensor<4x8xf32>
// CHECK-NEXT: %3 = molten.constant dense<7.000000e+00> : tensor<4x8xf32>
// CHECK-GENERIC-NEXT: %3 = "molten.constant"() <{value = dense<7.000000e+00> : tensor<4x8xf32>}> : () -> tensor<4x8xf32>
  %4 = molten.constant dense<[1.0, 2.0]> : tensor<2xbf16>
// CHECK-NEXT: %4 = molten.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xbf16>
// CHECK-GENERIC-NEXT: %4 = "molten.constant"() <{value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xbf16>}> : () -> tensor<2xbf16>
  %5 = molten.constant dense<[[1.0, -2.0, 3.0], [4.0, 5.0, 0.25]]> : tensor<2x3xf16>
// CHECK-NEXT: %5 = molten.constant dense<{{\[\[}}1.000000e+00, -2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 2.500000e-01]]> : tensor<2x3xf16>
// CHECK-GENERIC-NEXT: %5 = "molten.constant"() <{value = dense<{{\[\[}}1.000000e+00, -2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 2.500000e-01]]> : tensor<2x3xf16>}> : () -> tensor<2x3xf16>
  %6 = molten.constant dense<[1.5, 2.5, 3.5, 4.5]> : tensor<4xf32>
// CHECK-NEXT: %6 = molten.constant dense<[1.500000e+00, 2.500000e+00, 3.500000e+00, 4.500000e+00]> : tensor<4xf32>
// CHECK-GENERIC-NEXT: %6 = "molten.constant"() <{value = dense<[1.500000e+00, 2.500000e+00, 3.500000e+00, 4.500000e+00]> : tensor<4xf32>}> : () -> tensor<4xf32>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @reductions(%x: tensor<2x4x8xf32>, %h: tensor<16x32xf16>, %b: tensor<8xbf16>) {
// CHECK-LABEL: func.func @reductions(%x: tensor<2x4x8xf32>, %h: tensor<16x32xf16>, %b: tensor<8xbf16>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "reductions"
// CHECK-GENERIC-NEXT: ^bb0(%x: tensor<2x4x8xf32>, %h: tensor<16x32xf16>, %b: tensor<8xbf16>):
  %0 = molten.reduce_sum %x axes = [2] : tensor<2x4x8xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %0 = molten.reduce_sum %x axes = [2] : tensor<2x4x8xf32> -> tensor<2x4xf32>
// CHECK-GENERIC-NEXT: %0 = "molten.reduce_sum"(%x) <{axes = array<i64: 2>}> : (tensor<2x4x8xf32>) -> tensor<2x4xf32>
  %1 = molten.reduce_sum %x axes = [2] keepdim : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
// CHECK-NEXT: %1 = molten.reduce_sum %x axes = [2] keepdim : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
// CHECK-GENERIC-NEXT: %1 = "molten.reduce_sum"(%x) <{axes = array<i64: 2>, keepdim}> : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
  %2 = molten.reduce_sum %x axes = [2, 0] keepdim : tensor<2x4x8xf32> -> tensor<1x4x1xf32>
// CHECK-NEXT: %2 = molten.reduce_sum %x axes = [2, 0] keepdim : tensor<2x4x8xf32> -> tensor<1x4x1xf32>
// CHECK-GENERIC-NEXT: %2 = "molten.reduce_sum"(%x) <{axes = array<i64: 2, 0>, keepdim}> : (tensor<2x4x8xf32>) -> tensor<1x4x1xf32>
  %3 = molten.reduce_max %h axes = [0] : tensor<16x32xf16> -> tensor<32xf16>
// CHECK-NEXT: %3 = molten.reduce_max %h axes = [0] : tensor<16x32xf16> -> tensor<32xf16>
// CHECK-GENERIC-NEXT: %3 = "molten.reduce_max"(%h) <{axes = array<i64: 0>}> : (tensor<16x32xf16>) -> tensor<32xf16>
  %4 = molten.reduce_max %h axes = [1] keepdim : tensor<16x32xf16> -> tensor<16x1xf16>
// CHECK-NEXT: %4 = molten.reduce_max %h axes = [1] keepdim : tensor<16x32xf16> -> tensor<16x1xf16>
// CHECK-GENERIC-NEXT: %4 = "molten.reduce_max"(%h) <{axes = array<i64: 1>, keepdim}> : (tensor<16x32xf16>) -> tensor<16x1xf16>
  %5 = molten.reduce_max %x axes = [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
// CHECK-NEXT: %5 = molten.reduce_max %x axes = [0, 1, 2] : tensor<2x4x8xf32> -> tensor<f32>
// CHECK-GENERIC-NEXT: %5 = "molten.reduce_max"(%x) <{axes = array<i64: 0, 1, 2>}> : (tensor<2x4x8xf32>) -> tensor<f32>
  %a0 = molten.argmax %h axes = [1] : tensor<16x32xf16> -> tensor<16xi64>
// CHECK-NEXT: %a0 = molten.argmax %h axes = [1] : tensor<16x32xf16> -> tensor<16xi64>
// CHECK-GENERIC-NEXT: %a0 = "molten.argmax"(%h) <{axes = array<i64: 1>}> : (tensor<16x32xf16>) -> tensor<16xi64>
  %a1 = molten.argmin %x axes = [0] keepdim : tensor<2x4x8xf32> -> tensor<1x4x8xi64>
// CHECK-NEXT: %a1 = molten.argmin %x axes = [0] keepdim : tensor<2x4x8xf32> -> tensor<1x4x8xi64>
// CHECK-GENERIC-NEXT: %a1 = "molten.argmin"(%x) <{axes = array<i64: 0>, keepdim}> : (tensor<2x4x8xf32>) -> tensor<1x4x8xi64>
  %c0 = molten.cumsum %x axis = 2 : tensor<2x4x8xf32>
// CHECK-NEXT: %c0 = molten.cumsum %x axis = 2 : tensor<2x4x8xf32>
// CHECK-GENERIC-NEXT: %c0 = "molten.cumsum"(%x) <{axis = 2 : i64}> : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %c1 = molten.cumsum %h axis = 0 reverse exclusive : tensor<16x32xf16>
// CHECK-NEXT: %c1 = molten.cumsum %h axis = 0 reverse exclusive : tensor<16x32xf16>
// CHECK-GENERIC-NEXT: %c1 = "molten.cumsum"(%h) <{axis = 0 : i64, reverse, exclusive}> : (tensor<16x32xf16>) -> tensor<16x32xf16>
  %c2 = molten.cumprod %x axis = 1 : tensor<2x4x8xf32>
// CHECK-NEXT: %c2 = molten.cumprod %x axis = 1 : tensor<2x4x8xf32>
// CHECK-GENERIC-NEXT: %c2 = "molten.cumprod"(%x) <{axis = 1 : i64}> : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %c3 = molten.cummax %h axis = 1 reverse : tensor<16x32xf16>
// CHECK-NEXT: %c3 = molten.cummax %h axis = 1 reverse : tensor<16x32xf16>
// CHECK-GENERIC-NEXT: %c3 = "molten.cummax"(%h) <{axis = 1 : i64, reverse}> : (tensor<16x32xf16>) -> tensor<16x32xf16>
  %c4 = molten.cummin %x axis = 0 exclusive : tensor<2x4x8xf32>
// CHECK-NEXT: %c4 = molten.cummin %x axis = 0 exclusive : tensor<2x4x8xf32>
// CHECK-GENERIC-NEXT: %c4 = "molten.cummin"(%x) <{axis = 0 : i64, exclusive}> : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %f0 = molten.flip %x axes = [0, 2] : tensor<2x4x8xf32>
// CHECK-NEXT: %f0 = molten.flip %x axes = [0, 2] : tensor<2x4x8xf32>
// CHECK-GENERIC-NEXT: %f0 = "molten.flip"(%x) <{axes = array<i64: 0, 2>}> : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s0 = molten.slice %x axis = 2 start = 3 : tensor<2x4x8xf32> -> tensor<2x4x5xf32>
// CHECK-NEXT: %s0 = molten.slice %x axis = 2 start = 3 : tensor<2x4x8xf32> -> tensor<2x4x5xf32>
// CHECK-GENERIC-NEXT: %s0 = "molten.slice"(%x) <{axis = 2 : i64, start = 3 : i64}> : (tensor<2x4x8xf32>) -> tensor<2x4x5xf32>
  %p0 = molten.pad %h axis = 0 before = 2 : tensor<16x32xf16> -> tensor<19x32xf16>
// CHECK-NEXT: %p0 = molten.pad %h axis = 0 before = 2 : tensor<16x32xf16> -> tensor<19x32xf16>
// CHECK-GENERIC-NEXT: %p0 = "molten.pad"(%h) <{axis = 0 : i64, before = 2 : i64}> : (tensor<16x32xf16>) -> tensor<19x32xf16>
  %6 = molten.reduce_mean %b axes = [0] : tensor<8xbf16> -> tensor<bf16>
// CHECK-NEXT: %6 = molten.reduce_mean %b axes = [0] : tensor<8xbf16> -> tensor<bf16>
// CHECK-GENERIC-NEXT: %6 = "molten.reduce_mean"(%b) <{axes = array<i64: 0>}> : (tensor<8xbf16>) -> tensor<bf16>
  %7 = molten.reduce_mean %b axes = [0] keepdim : tensor<8xbf16> -> tensor<1xbf16>
// CHECK-NEXT: %7 = molten.reduce_mean %b axes = [0] keepdim : tensor<8xbf16> -> tensor<1xbf16>
// CHECK-GENERIC-NEXT: %7 = "molten.reduce_mean"(%b) <{axes = array<i64: 0>, keepdim}> : (tensor<8xbf16>) -> tensor<1xbf16>
  %8 = molten.reduce_mean %x axes = [0, 2] : tensor<2x4x8xf32> -> tensor<4xf32>
// CHECK-NEXT: %8 = molten.reduce_mean %x axes = [0, 2] : tensor<2x4x8xf32> -> tensor<4xf32>
// CHECK-GENERIC-NEXT: %8 = "molten.reduce_mean"(%x) <{axes = array<i64: 0, 2>}> : (tensor<2x4x8xf32>) -> tensor<4xf32>
  %9 = molten.reduce_mean %x axes = [1, 2] keepdim : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
// CHECK-NEXT: %9 = molten.reduce_mean %x axes = [1, 2] keepdim : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
// CHECK-GENERIC-NEXT: %9 = "molten.reduce_mean"(%x) <{axes = array<i64: 1, 2>, keepdim}> : (tensor<2x4x8xf32>) -> tensor<2x1x1xf32>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @shape(%x: tensor<4x8xf16>, %s: tensor<f32>, %b: tensor<1x8xbf16>) {
// CHECK-LABEL: func.func @shape(%x: tensor<4x8xf16>, %s: tensor<f32>, %b: tensor<1x8xbf16>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "shape"
// CHECK-GENERIC-NEXT: ^bb0(%x: tensor<4x8xf16>, %s: tensor<f32>, %b: tensor<1x8xbf16>):
  %0 = molten.broadcast_to %x : tensor<4x8xf16> -> tensor<2x4x8xf16>
// CHECK-NEXT: %0 = molten.broadcast_to %x : tensor<4x8xf16> -> tensor<2x4x8xf16>
// CHECK-GENERIC-NEXT: %0 = "molten.broadcast_to"(%x) : (tensor<4x8xf16>) -> tensor<2x4x8xf16>
  %1 = molten.broadcast_to %s : tensor<f32> -> tensor<3x5xf32>
// CHECK-NEXT: %1 = molten.broadcast_to %s : tensor<f32> -> tensor<3x5xf32>
// CHECK-GENERIC-NEXT: %1 = "molten.broadcast_to"(%s) : (tensor<f32>) -> tensor<3x5xf32>
  %2 = molten.broadcast_to %b : tensor<1x8xbf16> -> tensor<6x8xbf16>
// CHECK-NEXT: %2 = molten.broadcast_to %b : tensor<1x8xbf16> -> tensor<6x8xbf16>
// CHECK-GENERIC-NEXT: %2 = "molten.broadcast_to"(%b) : (tensor<1x8xbf16>) -> tensor<6x8xbf16>
  %3 = molten.reshape %x : tensor<4x8xf16> -> tensor<32xf16>
// CHECK-NEXT: %3 = molten.reshape %x : tensor<4x8xf16> -> tensor<32xf16>
// CHECK-GENERIC-NEXT: %3 = "molten.reshape"(%x) : (tensor<4x8xf16>) -> tensor<32xf16>
  %4 = molten.reshape %x : tensor<4x8xf16> -> tensor<2x2x8xf16>
// CHECK-NEXT: %4 = molten.reshape %x : tensor<4x8xf16> -> tensor<2x2x8xf16>
// CHECK-GENERIC-NEXT: %4 = "molten.reshape"(%x) : (tensor<4x8xf16>) -> tensor<2x2x8xf16>
  %5 = molten.reshape %s : tensor<f32> -> tensor<1x1xf32>
// CHECK-NEXT: %5 = molten.reshape %s : tensor<f32> -> tensor<1x1xf32>
// CHECK-GENERIC-NEXT: %5 = "molten.reshape"(%s) : (tensor<f32>) -> tensor<1x1xf32>
  %6 = molten.reshape %b : tensor<1x8xbf16> -> tensor<8xbf16>
// CHECK-NEXT: %6 = molten.reshape %b : tensor<1x8xbf16> -> tensor<8xbf16>
// CHECK-GENERIC-NEXT: %6 = "molten.reshape"(%b) : (tensor<1x8xbf16>) -> tensor<8xbf16>
  %7 = molten.transpose %x permutation = [1, 0] : tensor<4x8xf16> -> tensor<8x4xf16>
// CHECK-NEXT: %7 = molten.transpose %x permutation = [1, 0] : tensor<4x8xf16> -> tensor<8x4xf16>
// CHECK-GENERIC-NEXT: %7 = "molten.transpose"(%x) <{permutation = array<i64: 1, 0>}> : (tensor<4x8xf16>) -> tensor<8x4xf16>
  %8 = molten.transpose %4 permutation = [2, 0, 1] : tensor<2x2x8xf16> -> tensor<8x2x2xf16>
// CHECK-NEXT: %8 = molten.transpose %4 permutation = [2, 0, 1] : tensor<2x2x8xf16> -> tensor<8x2x2xf16>
// CHECK-GENERIC-NEXT: %8 = "molten.transpose"(%4) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x2x8xf16>) -> tensor<8x2x2xf16>
  %9 = molten.transpose %b permutation = [0, 1] : tensor<1x8xbf16> -> tensor<1x8xbf16>
// CHECK-NEXT: %9 = molten.transpose %b permutation = [0, 1] : tensor<1x8xbf16> -> tensor<1x8xbf16>
// CHECK-GENERIC-NEXT: %9 = "molten.transpose"(%b) <{permutation = array<i64: 0, 1>}> : (tensor<1x8xbf16>) -> tensor<1x8xbf16>
  %10 = molten.transpose %s permutation = [] : tensor<f32> -> tensor<f32>
// CHECK-NEXT: %10 = molten.transpose %s permutation = [] : tensor<f32> -> tensor<f32>
// CHECK-GENERIC-NEXT: %10 = "molten.transpose"(%s) <{permutation = array<i64>}> : (tensor<f32>) -> tensor<f32>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @matmul(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>, %bt: tensor<32x64xf32>, %at: tensor<64x16xf32>) {
// CHECK-LABEL: func.func @matmul(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>, %bt: tensor<32x64xf32>, %at: tensor<64x16xf32>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "matmul"
// CHECK-GENERIC-NEXT: ^bb0(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>, %bt: tensor<32x64xf32>, %at: tensor<64x16xf32>):
  %0 = molten.matmul %a, %b : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT: %0 = molten.matmul %a, %b : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
// CHECK-GENERIC-NEXT: %0 = "molten.matmul"(%a, %b) : (tensor<16x64xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %1 = molten.matmul %a, %bt transpose_b : (tensor<16x64xf32>, tensor<32x64xf32>) -> tensor<16x32xf32>
// CHECK-NEXT: %1 = molten.matmul %a, %bt transpose_b : (tensor<16x64xf32>, tensor<32x64xf32>) -> tensor<16x32xf32>
// CHECK-GENERIC-NEXT: %1 = "molten.matmul"(%a, %bt) <{transpose_b}> : (tensor<16x64xf32>, tensor<32x64xf32>) -> tensor<16x32xf32>
  %2 = molten.matmul %at, %b transpose_a : (tensor<64x16xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
// CHECK-NEXT: %2 = molten.matmul %at, %b transpose_a : (tensor<64x16xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
// CHECK-GENERIC-NEXT: %2 = "molten.matmul"(%at, %b) <{transpose_a}> : (tensor<64x16xf32>, tensor<64x32xf32>) -> tensor<16x32xf32>
  %3 = molten.matmul %at, %bt transpose_a transpose_b : (tensor<64x16xf32>, tensor<32x64xf32>) -> tensor<16x32xf32>
// CHECK-NEXT: %3 = molten.matmul %at, %bt transpose_a transpose_b : (tensor<64x16xf32>, tensor<32x64xf32>) -> tensor<16x32xf32>
// CHECK-GENERIC-NEXT: %3 = "molten.matmul"(%at, %bt) <{transpose_a, transpose_b}> : (tensor<64x16xf32>, tensor<32x64xf32>) -> tensor<16x32xf32>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @matmul_batched(%p: tensor<2x1x16x64xbf16>, %q: tensor<3x64x8xbf16>, %w: tensor<8x64xf16>, %x: tensor<4x16x64xf16>) {
// CHECK-LABEL: func.func @matmul_batched(%p: tensor<2x1x16x64xbf16>, %q: tensor<3x64x8xbf16>, %w: tensor<8x64xf16>, %x: tensor<4x16x64xf16>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "matmul_batched"
// CHECK-GENERIC-NEXT: ^bb0(%p: tensor<2x1x16x64xbf16>, %q: tensor<3x64x8xbf16>, %w: tensor<8x64xf16>, %x: tensor<4x16x64xf16>):
  %0 = molten.matmul %p, %q : (tensor<2x1x16x64xbf16>, tensor<3x64x8xbf16>) -> tensor<2x3x16x8xbf16>
// CHECK-NEXT: %0 = molten.matmul %p, %q : (tensor<2x1x16x64xbf16>, tensor<3x64x8xbf16>) -> tensor<2x3x16x8xbf16>
// CHECK-GENERIC-NEXT: %0 = "molten.matmul"(%p, %q) : (tensor<2x1x16x64xbf16>, tensor<3x64x8xbf16>) -> tensor<2x3x16x8xbf16>
  %1 = molten.matmul %x, %w transpose_b : (tensor<4x16x64xf16>, tensor<8x64xf16>) -> tensor<4x16x8xf16>
// CHECK-NEXT: %1 = molten.matmul %x, %w transpose_b : (tensor<4x16x64xf16>, tensor<8x64xf16>) -> tensor<4x16x8xf16>
// CHECK-GENERIC-NEXT: %1 = "molten.matmul"(%x, %w) <{transpose_b}> : (tensor<4x16x64xf16>, tensor<8x64xf16>) -> tensor<4x16x8xf16>
  %2 = molten.matmul %w, %x transpose_b : (tensor<8x64xf16>, tensor<4x16x64xf16>) -> tensor<4x8x16xf16>
// CHECK-NEXT: %2 = molten.matmul %w, %x transpose_b : (tensor<8x64xf16>, tensor<4x16x64xf16>) -> tensor<4x8x16xf16>
// CHECK-GENERIC-NEXT: %2 = "molten.matmul"(%w, %x) <{transpose_b}> : (tensor<8x64xf16>, tensor<4x16x64xf16>) -> tensor<4x8x16xf16>
  %3 = molten.matmul %p, %q : (tensor<2x1x16x64xbf16>, tensor<3x64x8xbf16>) -> tensor<2x3x16x8xf32>
// CHECK-NEXT: %3 = molten.matmul %p, %q : (tensor<2x1x16x64xbf16>, tensor<3x64x8xbf16>) -> tensor<2x3x16x8xf32>
// CHECK-GENERIC-NEXT: %3 = "molten.matmul"(%p, %q) : (tensor<2x1x16x64xbf16>, tensor<3x64x8xbf16>) -> tensor<2x3x16x8xf32>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @norms(%x: tensor<2x16x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<16x64xf32>, %h: tensor<8x128xbf16>, %wh: tensor<128xbf16>, %g: tensor<4x32xf16>, %wg: tensor<32xf16>) {
// CHECK-LABEL: func.func @norms(%x: tensor<2x16x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<16x64xf32>, %h: tensor<8x128xbf16>, %wh: tensor<128xbf16>, %g: tensor<4x32xf16>, %wg: tensor<32xf16>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "norms"
// CHECK-GENERIC-NEXT: ^bb0(%x: tensor<2x16x64xf32>, %w: tensor<64xf32>, %b: tensor<64xf32>, %m: tensor<16x64xf32>, %h: tensor<8x128xbf16>, %wh: tensor<128xbf16>, %g: tensor<4x32xf16>, %wg: tensor<32xf16>):
  %0 = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: %0 = molten.rms_norm %x, %w eps = 1.000000e-06 : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK-GENERIC-NEXT: %0 = "molten.rms_norm"(%x, %w) <{epsilon = 1.000000e-06 : f64}> : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %1 = molten.rms_norm %x, %m eps = 0.0 : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: %1 = molten.rms_norm %x, %m eps = 0.000000e+00 : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-GENERIC-NEXT: %1 = "molten.rms_norm"(%x, %m) <{epsilon = 0.000000e+00 : f64}> : (tensor<2x16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  %2 = molten.rms_norm %h, %wh eps = 1.000000e-05 : (tensor<8x128xbf16>, tensor<128xbf16>) -> tensor<8x128xbf16>
// CHECK-NEXT: %2 = molten.rms_norm %h, %wh eps = 1.000000e-05 : (tensor<8x128xbf16>, tensor<128xbf16>) -> tensor<8x128xbf16>
// CHECK-GENERIC-NEXT: %2 = "molten.rms_norm"(%h, %wh) <{epsilon = 1.000000e-05 : f64}> : (tensor<8x128xbf16>, tensor<128xbf16>) -> tensor<8x128xbf16>
  %3 = molten.layer_norm %x, %w, %b eps = 1.000000e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: %3 = molten.layer_norm %x, %w, %b eps = 1.000000e-05 : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK-GENERIC-NEXT: %3 = "molten.layer_norm"(%x, %w, %b) <{epsilon = 1.000000e-05 : f64}> : (tensor<2x16x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %4 = molten.layer_norm %h, %wh, %wh eps = 1.000000e-05 : (tensor<8x128xbf16>, tensor<128xbf16>, tensor<128xbf16>) -> tensor<8x128xbf16>
// CHECK-NEXT: %4 = molten.layer_norm %h, %wh, %wh eps = 1.000000e-05 : (tensor<8x128xbf16>, tensor<128xbf16>, tensor<128xbf16>) -> tensor<8x128xbf16>
// CHECK-GENERIC-NEXT: %4 = "molten.layer_norm"(%h, %wh, %wh) <{epsilon = 1.000000e-05 : f64}> : (tensor<8x128xbf16>, tensor<128xbf16>, tensor<128xbf16>) -> tensor<8x128xbf16>
  %5 = molten.layer_norm %g, %wg, %wg eps = 0.001 : (tensor<4x32xf16>, tensor<32xf16>, tensor<32xf16>) -> tensor<4x32xf16>
// CHECK-NEXT: %5 = molten.layer_norm %g, %wg, %wg eps = 1.000000e-03 : (tensor<4x32xf16>, tensor<32xf16>, tensor<32xf16>) -> tensor<4x32xf16>
// CHECK-GENERIC-NEXT: %5 = "molten.layer_norm"(%g, %wg, %wg) <{epsilon = 1.000000e-03 : f64}> : (tensor<4x32xf16>, tensor<32xf16>, tensor<32xf16>) -> tensor<4x32xf16>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @softmax(%x: tensor<2x16x64xf32>, %h: tensor<8x128xbf16>, %v: tensor<10xf16>) {
// CHECK-LABEL: func.func @softmax(%x: tensor<2x16x64xf32>, %h: tensor<8x128xbf16>, %v: tensor<10xf16>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "softmax"
// CHECK-GENERIC-NEXT: ^bb0(%x: tensor<2x16x64xf32>, %h: tensor<8x128xbf16>, %v: tensor<10xf16>):
  %0 = molten.softmax %x axis = 0 : tensor<2x16x64xf32>
// CHECK-NEXT: %0 = molten.softmax %x axis = 0 : tensor<2x16x64xf32>
// CHECK-GENERIC-NEXT: %0 = "molten.softmax"(%x) <{axis = 0 : i64}> : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  %1 = molten.softmax %x axis = 2 : tensor<2x16x64xf32>
// CHECK-NEXT: %1 = molten.softmax %x axis = 2 : tensor<2x16x64xf32>
// CHECK-GENERIC-NEXT: %1 = "molten.softmax"(%x) <{axis = 2 : i64}> : (tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
  %2 = molten.softmax %h axis = 1 : tensor<8x128xbf16>
// CHECK-NEXT: %2 = molten.softmax %h axis = 1 : tensor<8x128xbf16>
// CHECK-GENERIC-NEXT: %2 = "molten.softmax"(%h) <{axis = 1 : i64}> : (tensor<8x128xbf16>) -> tensor<8x128xbf16>
  %3 = molten.softmax %v axis = 0 : tensor<10xf16>
// CHECK-NEXT: %3 = molten.softmax %v axis = 0 : tensor<10xf16>
// CHECK-GENERIC-NEXT: %3 = "molten.softmax"(%v) <{axis = 0 : i64}> : (tensor<10xf16>) -> tensor<10xf16>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @rope(%x: tensor<2x16x64xf32>, %cos: tensor<16x64xf32>, %sin: tensor<16x64xf32>, %h: tensor<4x8x32xbf16>, %ch: tensor<8x1xbf16>, %sh: tensor<32xbf16>) {
// CHECK-LABEL: func.func @rope(%x: tensor<2x16x64xf32>, %cos: tensor<16x64xf32>, %sin: tensor<16x64xf32>, %h: tensor<4x8x32xbf16>, %ch: tensor<8x1xbf16>, %sh: tensor<32xbf16>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "rope"
// CHECK-GENERIC-NEXT: ^bb0(%x: tensor<2x16x64xf32>, %cos: tensor<16x64xf32>, %sin: tensor<16x64xf32>, %h: tensor<4x8x32xbf16>, %ch: tensor<8x1xbf16>, %sh: tensor<32xbf16>):
  %0 = molten.rope %x, %cos, %sin : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-NEXT: %0 = molten.rope %x, %cos, %sin : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
// CHECK-GENERIC-NEXT: %0 = "molten.rope"(%x, %cos, %sin) : (tensor<2x16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<2x16x64xf32>
  %1 = molten.rope %h, %ch, %sh : (tensor<4x8x32xbf16>, tensor<8x1xbf16>, tensor<32xbf16>) -> tensor<4x8x32xbf16>
// CHECK-NEXT: %1 = molten.rope %h, %ch, %sh : (tensor<4x8x32xbf16>, tensor<8x1xbf16>, tensor<32xbf16>) -> tensor<4x8x32xbf16>
// CHECK-GENERIC-NEXT: %1 = "molten.rope"(%h, %ch, %sh) : (tensor<4x8x32xbf16>, tensor<8x1xbf16>, tensor<32xbf16>) -> tensor<4x8x32xbf16>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @attention(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x256x64xf16>, %v: tensor<2x8x256x32xf16>, %qf: tensor<16x64xf32>, %kb: tensor<4x1x32x64xbf16>, %qb: tensor<3x16x64xbf16>) {
// CHECK-LABEL: func.func @attention(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x256x64xf16>, %v: tensor<2x8x256x32xf16>, %qf: tensor<16x64xf32>, %kb: tensor<4x1x32x64xbf16>, %qb: tensor<3x16x64xbf16>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "attention"
// CHECK-GENERIC-NEXT: ^bb0(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x256x64xf16>, %v: tensor<2x8x256x32xf16>, %qf: tensor<16x64xf32>, %kb: tensor<4x1x32x64xbf16>, %qb: tensor<3x16x64xbf16>):
  %0 = molten.attention %q, %q, %q scale = 1.250000e-01 causal : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16>
// CHECK-NEXT: %0 = molten.attention %q, %q, %q scale = 1.250000e-01 causal : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16>
// CHECK-GENERIC-NEXT: %0 = "molten.attention"(%q, %q, %q) <{scale = 1.250000e-01 : f64, causal}> : (tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16>
  %1 = molten.attention %q, %k, %v scale = 1.250000e-01 : (tensor<2x8x128x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x32xf16>) -> tensor<2x8x128x32xf16>
// CHECK-NEXT: %1 = molten.attention %q, %k, %v scale = 1.250000e-01 : (tensor<2x8x128x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x32xf16>) -> tensor<2x8x128x32xf16>
// CHECK-GENERIC-NEXT: %1 = "molten.attention"(%q, %k, %v) <{scale = 1.250000e-01 : f64}> : (tensor<2x8x128x64xf16>, tensor<2x8x256x64xf16>, tensor<2x8x256x32xf16>) -> tensor<2x8x128x32xf16>
  %2 = molten.attention %qf, %qf, %qf scale = 1.0 : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
// CHECK-NEXT: %2 = molten.attention %qf, %qf, %qf scale = 1.000000e+00 : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
// CHECK-GENERIC-NEXT: %2 = "molten.attention"(%qf, %qf, %qf) <{scale = 1.000000e+00 : f64}> : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<16x64xf32>) -> tensor<16x64xf32>
  %3 = molten.attention %qb, %kb, %kb scale = -0.5 causal : (tensor<3x16x64xbf16>, tensor<4x1x32x64xbf16>, tensor<4x1x32x64xbf16>) -> tensor<4x3x16x64xbf16>
// CHECK-NEXT: %3 = molten.attention %qb, %kb, %kb scale = -5.000000e-01 causal : (tensor<3x16x64xbf16>, tensor<4x1x32x64xbf16>, tensor<4x1x32x64xbf16>) -> tensor<4x3x16x64xbf16>
// CHECK-GENERIC-NEXT: %3 = "molten.attention"(%qb, %kb, %kb) <{scale = -5.000000e-01 : f64, causal}> : (tensor<3x16x64xbf16>, tensor<4x1x32x64xbf16>, tensor<4x1x32x64xbf16>) -> tensor<4x3x16x64xbf16>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

func.func @causal_mask() {
// CHECK-LABEL: func.func @causal_mask() {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "causal_mask"
  %0 = molten.causal_mask : tensor<128x128xf32>
// CHECK-NEXT: %0 = molten.causal_mask : tensor<128x128xf32>
// CHECK-GENERIC-NEXT: %0 = "molten.causal_mask"() : () -> tensor<128x128xf32>
  %1 = molten.causal_mask : tensor<16x32xf16>
// CHECK-NEXT: %1 = molten.causal_mask : tensor<16x32xf16>
// CHECK-GENERIC-NEXT: %1 = "molten.causal_mask"() : () -> tensor<16x32xf16>
  %2 = molten.causal_mask : tensor<2x4x4xbf16>
// CHECK-NEXT: %2 = molten.causal_mask : tensor<2x4x4xbf16>
// CHECK-GENERIC-NEXT: %2 = "molten.causal_mask"() : () -> tensor<2x4x4xbf16>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()

// -----

// Integers, bools and lookups: a comparison's bool, where, iota, take, gather.
func.func @lookups(%t: tensor<10x4xbf16>, %ids: tensor<2x3xi64>, %i: tensor<2x1xi32>) {
// CHECK-LABEL: func.func @lookups(%t: tensor<10x4xbf16>, %ids: tensor<2x3xi64>, %i: tensor<2x1xi32>) {
// CHECK-GENERIC-LABEL: "func.func"() <{sym_name = "lookups"
// CHECK-GENERIC-NEXT: ^bb0(%t: tensor<10x4xbf16>, %ids: tensor<2x3xi64>, %i: tensor<2x1xi32>):
  %0 = molten.take %t, %ids axis = 0 : (tensor<10x4xbf16>, tensor<2x3xi64>) -> tensor<2x3x4xbf16>
// CHECK-NEXT: %0 = molten.take %t, %ids axis = 0 : (tensor<10x4xbf16>, tensor<2x3xi64>) -> tensor<2x3x4xbf16>
// CHECK-GENERIC-NEXT: %0 = "molten.take"(%t, %ids) <{axis = 0 : i64}> : (tensor<10x4xbf16>, tensor<2x3xi64>) -> tensor<2x3x4xbf16>
  %1 = molten.gather %ids, %i axis = 1 : (tensor<2x3xi64>, tensor<2x1xi32>) -> tensor<2x1xi64>
// CHECK-NEXT: %1 = molten.gather %ids, %i axis = 1 : (tensor<2x3xi64>, tensor<2x1xi32>) -> tensor<2x1xi64>
// CHECK-GENERIC-NEXT: %1 = "molten.gather"(%ids, %i) <{axis = 1 : i64}> : (tensor<2x3xi64>, tensor<2x1xi32>) -> tensor<2x1xi64>
  %s = molten.scatter %ids, %i, %1 axis = 1 accumulate : (tensor<2x3xi64>, tensor<2x1xi32>, tensor<2x1xi64>) -> tensor<2x3xi64>
// CHECK-NEXT: %s = molten.scatter %ids, %i, %1 axis = 1 accumulate : (tensor<2x3xi64>, tensor<2x1xi32>, tensor<2x1xi64>) -> tensor<2x3xi64>
// CHECK-GENERIC-NEXT: %s = "molten.scatter"(%ids, %i, %1) <{axis = 1 : i64, accumulate}> : (tensor<2x3xi64>, tensor<2x1xi32>, tensor<2x1xi64>) -> tensor<2x3xi64>
  %2 = molten.iota axis = 1 : tensor<2x3xi64>
// CHECK-NEXT: %2 = molten.iota axis = 1 : tensor<2x3xi64>
// CHECK-GENERIC-NEXT: %2 = "molten.iota"() <{axis = 1 : i64}> : () -> tensor<2x3xi64>
  %3 = molten.lt %ids, %2 : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi1>
// CHECK-NEXT: %3 = molten.lt %ids, %2 : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi1>
// CHECK-GENERIC-NEXT: %3 = "molten.lt"(%ids, %2) : (tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi1>
  %4 = molten.where %3, %ids, %2 : (tensor<2x3xi1>, tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
// CHECK-NEXT: %4 = molten.where %3, %ids, %2 : (tensor<2x3xi1>, tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
// CHECK-GENERIC-NEXT: %4 = "molten.where"(%3, %ids, %2) : (tensor<2x3xi1>, tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  func.return
// CHECK-NEXT: func.return
// CHECK-GENERIC-NEXT: "func.return"() : () -> ()
}
// CHECK-NEXT: }
// CHECK-GENERIC-NEXT: }) : () -> ()
