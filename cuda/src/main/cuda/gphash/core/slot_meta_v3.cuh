// Format 3's slot meta word, exactly as org.gphash.format.SlotMetaV3 encodes it (issue 53):
// fingerprint in bits 63..48, the value's class in 47..41 (its lowest bit, 41, says bare), its offset in
// 16-byte units in 40..0. Words written before bare classes (six bits of class above a 42-bit offset)
// read as the same framed class in any pool under 32 TiB.
// The slot states are format 2's (slot_meta.cuh): EMPTY is the word 0, INSERT fingerprint 1.
// Checked against the Java side on the host (format3_check.cu, Format3AgreementTest). The
// kernels take it through slot_meta_format.cuh.
#pragma once
#include <cstdint>

namespace gphash {

constexpr int kMetaV3OffsetBits = 41;
constexpr uint64_t kMetaV3OffsetUnit = 16;
constexpr uint64_t kMetaV3UnitsMask = (1ull << kMetaV3OffsetBits) - 1;

__host__ __device__ __forceinline__ uint64_t meta_v3_make(uint32_t fp, uint32_t value_class, uint64_t offset) {
    return (static_cast<uint64_t>(fp) << 48) | (static_cast<uint64_t>(value_class & 0x7Fu) << kMetaV3OffsetBits)
           | ((offset / kMetaV3OffsetUnit) & kMetaV3UnitsMask);
}
__host__ __device__ __forceinline__ uint32_t meta_v3_fingerprint(uint64_t meta) { return static_cast<uint32_t>(meta >> 48); }
__host__ __device__ __forceinline__ uint32_t meta_v3_class(uint64_t meta) {
    return static_cast<uint32_t>((meta >> kMetaV3OffsetBits) & 0x7Full);
}
__host__ __device__ __forceinline__ uint64_t meta_v3_value_offset(uint64_t meta) {
    return (meta & kMetaV3UnitsMask) * kMetaV3OffsetUnit;
}

}  // namespace gphash
