nvcc -std=c++17 -gencode arch=compute_90,code=sm_90 -I$CUTLASS_INCLUDE -Iserver/cutegen/include -ptx tests/corpus/silent/wgmma_on_sm90_non_a.cu -o /tmp/wgmma_on_sm90_non_a.ptx
