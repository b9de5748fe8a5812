// What the opaque stream and event handles of cuzk.h are: a CUDA object and
// the device it belongs to (set current before using it).
#pragma once

#include <cuda_runtime.h>

struct cuzk_stream {
    int device;
    cudaStream_t stream;
};

struct cuzk_event {
    int device;
    cudaEvent_t event;
};
