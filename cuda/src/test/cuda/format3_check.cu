// Host-side check of format 3's layout constants (value_classes.cuh, slot_meta_v3.cuh), built by nvcc
// and run by Format3AgreementTest, which compares what it prints with the Java side
// (org.gphash.format.ValueClasses, SlotMetaV3) on a committed known-answer file and random inputs.
//
// Reads lines, one question each, from standard input:
//   "B CLASS"               prints the class's block bytes
//   "L LENGTH"              prints the least framed class holding a value of LENGTH bytes and its header
//                           (-1 past the largest)
//   "R LENGTH"              prints the bare class whose block has LENGTH bytes (-1 where none has)
//   "M FP CLASS OFFSET"     prints the meta word (16 hex digits), then the fingerprint, class and offset
//                           decoded from it (offset in decimal)
//   "H LENGTH CHECKSUM"     prints the block header (16 hex digits), then its length and checksum decoded
//   "W HEADER CLASS"        prints 1 if the header (hex) is whole in a block of CLASS, else 0
//   "F FORMAT VSIZE FP BLOCK" the kernels' view of a pool of FORMAT (2 or 3) and value size VSIZE
//                           (slot_meta_format.cuh, TableParams filled as KernelParams fills it: the
//                           class of a value of VSIZE bytes, bare where VSIZE is a block size): prints
//                           the word publishing BLOCK (hex), the block and the value's first byte decoded
//                           from it, whether its class is the pool's, and the header the kernels write
//                           (hex; 0 in format 2)
//   "C VSIZE LENGTH"        the class a value of LENGTH bytes takes in a format 3 pool of value size VSIZE
//                           (value_class_for: the pool's class, bare where VSIZE is a block size, for
//                           LENGTH = VSIZE, else the least framed class)
//   "U CLASS WORD"          the bits of a segment's unit word WORD (0 to 63) where blocks of CLASS start
//                           (segment_starts.cuh's seg_start_mask, the blocks a segment holds), hex
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "gphash/core/slot_meta_format.cuh"
#include "gphash/core/slot_meta_v3.cuh"
#include "gphash/core/value_block_header.cuh"
#include "gphash/core/value_classes.cuh"
#include "gphash/pipeline/segment_starts.cuh"

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) {
            continue;
        }
        std::istringstream in(line);
        std::string what;
        in >> what;
        if (what == "B") {
            int c = -1;
            in >> c;
            if (c < 0 || c >= gphash::kValueClassCount) {
                std::fprintf(stderr, "bad class: %s\n", line.c_str());
                return 2;
            }
            std::printf("%u\n", gphash::value_block_bytes(c));
        } else if (what == "L") {
            unsigned long long length = 0;
            in >> length;
            std::printf("%d\n", gphash::value_class_of(length));
        } else if (what == "R") {
            unsigned long long length = 0;
            in >> length;
            std::printf("%d\n", gphash::value_bare_class_of(length));
        } else if (what == "M") {
            unsigned long fp = 0;
            unsigned long cls = 0;
            unsigned long long offset = 0;
            in >> fp >> cls >> offset;
            const uint64_t m = gphash::meta_v3_make(static_cast<uint32_t>(fp), static_cast<uint32_t>(cls), offset);
            std::printf("%016llx %u %u %llu\n", static_cast<unsigned long long>(m), gphash::meta_v3_fingerprint(m),
                        gphash::meta_v3_class(m), static_cast<unsigned long long>(gphash::meta_v3_value_offset(m)));
        } else if (what == "H") {
            unsigned long length = 0;
            unsigned long checksum = 0;
            in >> length >> checksum;
            const uint64_t h = gphash::value_header_make(static_cast<uint32_t>(length), static_cast<uint32_t>(checksum));
            std::printf("%016llx %u %u\n", static_cast<unsigned long long>(h), gphash::value_header_length(h),
                        gphash::value_header_checksum(h));
        } else if (what == "W") {
            unsigned long long header = 0;
            int cls = -1;
            in >> std::hex >> header >> std::dec >> cls;
            std::printf("%d\n", gphash::value_header_whole_in(header, cls) ? 1 : 0);
        } else if (what == "F") {
            long long format = 0;
            unsigned long long vs = 0;
            unsigned long fp = 0;
            unsigned long long block = 0;
            in >> format >> vs >> fp >> block;
            gphash::TableParams t{};
            t.format = format;
            t.value_size = static_cast<int64_t>(vs);
            const int bare = gphash::value_bare_class_of(vs);
            t.value_class = format != gphash::kFormat3 ? -1 : bare >= 0 ? bare : gphash::value_class_of(vs);
            const uint64_t m = gphash::meta_publish(t, static_cast<uint32_t>(fp), block);
            std::printf("%016llx %llu %llu %d %016llx\n", static_cast<unsigned long long>(m),
                        static_cast<unsigned long long>(gphash::meta_block(t, m)),
                        static_cast<unsigned long long>(gphash::meta_value_at(t, m)),
                        format == gphash::kFormat3 ? static_cast<int>(gphash::meta_v3_class(m)) : -1,
                        static_cast<unsigned long long>(gphash::values_framed(t) ? gphash::pool_value_header(t) : 0));
        } else if (what == "C") {
            unsigned long long vs = 0;
            unsigned long long length = 0;
            in >> vs >> length;
            gphash::TableParams t{};
            t.format = gphash::kFormat3;
            t.value_size = static_cast<int64_t>(vs);
            const int bare = gphash::value_bare_class_of(vs);
            t.value_class = bare >= 0 ? bare : gphash::value_class_of(vs);
            std::printf("%d\n", gphash::value_class_for(t, static_cast<uint32_t>(length)));
        } else if (what == "U") {
            int c = -1;
            unsigned w = 0;
            in >> c >> w;
            const uint32_t bytes = gphash::value_block_bytes(c);
            const uint32_t per = static_cast<uint32_t>(gphash::kSegmentBytes / bytes);
            std::printf("%016llx\n", static_cast<unsigned long long>(
                    gphash::seg_start_mask(w, bytes / static_cast<uint32_t>(gphash::kHeapUnitBytes), per)));
        } else {
            std::fprintf(stderr, "bad line: %s\n", line.c_str());
            return 2;
        }
    }
    return 0;
}
