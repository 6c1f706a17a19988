nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -I$CUTLASS_INCLUDE -Iserver/cutegen/include -ptx tests/corpus/silent/sm120_fp8_mma_on_sm90a.cu -o /tmp/sm120_fp8_mma_on_sm90a.ptx
