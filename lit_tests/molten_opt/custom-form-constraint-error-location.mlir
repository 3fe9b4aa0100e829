// RUN: not molten-opt %s 2>&1 | filecheck %s

// An operand or result type that breaks an op's type constraint, written in
// the op's custom form, is checked by xDSL's assembly format while parsing;
// molten-opt reports it as a parse error at the op: file, line, column, op
// name and source line.

func.func @non_tensor(%x: f32, %y: f32) {
  %0 = molten.add %x, %y : (f32, f32) -> f32
  func.return
}

// CHECK: {{^.*}}custom-form-constraint-error-location.mlir:[[# @LINE - 4]]:{{[0-9]+}}: error:
// CHECK: f32 should be of base attribute tensor
