nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -I$CUTLASS_INCLUDE -Iserver/cutegen/include -ptx tests/corpus/errors/local_tile_missing_step.cu -o /tmp/x.ptx
