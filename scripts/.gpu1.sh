. scripts/gpu-install >/dev/null 2>&1 || { echo install failed; exit 1; }
export PYTHONPATH=.:$PYTHONPATH
nvidia-smi --query-gpu=name --format=csv,noheader
git log --oneline | head -1
timeout 300 python -m pytest -q -x -p no:cacheprovider tests/test_gpu_kernels.py -k "heads" tests/test_decoder_layer.py tests/test_standalone.py tests/test_fuse_prologue.py -m gpu -s 2>&1 | grep -v "^$" | tail -25 > $OUT/pytest.log
tail -5 $OUT/pytest.log
grep -E "decoder layer:|relative L2|a call|PASS|FAIL" $OUT/pytest.log | head
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool python scripts/gemm-sanitize heads 2>&1 | tail -3 | sed "s/^/gemm-$tool: /"
done
timeout 120 compute-sanitizer --tool memcheck python scripts/layer-sanitize llama3-8b 17 2>&1 | tail -2 | sed "s/^/layer-memcheck: /"
timeout 150 compute-sanitizer --tool racecheck python scripts/layer-sanitize qwen2.5-7b 17 2>&1 | tail -2 | sed "s/^/layer-racecheck: /"
