nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -I$CUTLASS_INCLUDE -Iserver/cutegen/include -ptx tests/corpus/errors/mma_wrong_value_type.cu -o /tmp/x.ptx
