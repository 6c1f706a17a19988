nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -I$CUTLASS_INCLUDE -Iserver/cutegen/include -ptx tests/corpus/silent/cp_async_to_registers.cu -o /tmp/x.ptx
