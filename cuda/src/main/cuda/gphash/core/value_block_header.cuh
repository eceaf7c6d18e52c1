// Format 3's value block header, exactly as org.gphash.format.ValueBlockHeader writes and checks it
// (issue 53): one little-endian 64-bit word before the value, its length in bits 31..0 and its item
// checksum in 63..32. A header read from a block of class c is whole only where its length's class is
// c: a torn value of one class is never read as another. Checked against the Java side on the host
// (format3_check.cu, Format3AgreementTest). The kernels take it through slot_meta_format.cuh.
#pragma once
#include <cstdint>

#include "gphash/core/value_classes.cuh"

namespace gphash {

__host__ __device__ __forceinline__ uint64_t value_header_make(uint32_t length, uint32_t checksum) {
    return (static_cast<uint64_t>(checksum) << 32) | length;
}
__host__ __device__ __forceinline__ uint32_t value_header_length(uint64_t header) {
    return static_cast<uint32_t>(header);
}
__host__ __device__ __forceinline__ uint32_t value_header_checksum(uint64_t header) {
    return static_cast<uint32_t>(header >> 32);
}
// Whether `header`, read from a block of class `value_class`, is one that block's value could have.
__host__ __device__ inline bool value_header_whole_in(uint64_t header, int value_class) {
    return value_class_of(value_header_length(header)) == value_class;
}

}  // namespace gphash
