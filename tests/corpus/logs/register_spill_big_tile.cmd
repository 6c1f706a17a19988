nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -I$CUTLASS_INCLUDE -Iserver/cutegen/include -ptx tests/corpus/silent/register_spill_big_tile.cu -o /tmp/x.ptx
