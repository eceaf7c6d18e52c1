// Host-side run of BktCache's selection (cache_select.cuh), built by nvcc and run by
// CacheSelectAgreementTest, which compares the buckets it chooses with the Java reference
// (org.gphash.bktcache.loading.TopBuckets).
//
// Reads one load per line: "K S0 S1 ..." (the cache's capacity in buckets, then each bucket's 32-bit
// score, decimal). Runs what the load's kernels run, one bucket at a time instead of one thread each:
// the four histogram passes with their digit picks, then the admission of every bucket, ties ranked in
// ascending bucket order (the GPU ranks them in whatever order its threads come, which is why the
// tests compare it to the reference only on how many ties it takes).
//
// Prints the chosen buckets, ascending, or "-" when none is chosen.
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gphash/cache/cache_select.cuh"

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        std::istringstream in(line);
        unsigned long long k = 0;
        in >> k;
        std::vector<uint32_t> scores;
        unsigned long long s;
        while (in >> s) scores.push_back(static_cast<uint32_t>(s));
        unsigned long long st[gphash::kLoadStateCount] = {};
        unsigned long long hist[gphash::kSelectDigits] = {};
        for (int shift = 24; shift >= 0; shift -= 8) {
            if (st[gphash::kTakeAll] == 0) {
                for (uint32_t x : scores) {
                    if (gphash::under_prefix(st, x)) hist[gphash::select_digit(x, shift)]++;
                }
            }
            gphash::pick_digit(st, hist, k, shift);
        }
        const uint32_t threshold = static_cast<uint32_t>(st[gphash::kThreshold]);
        const unsigned long long ties = st[gphash::kTies];
        std::string out;
        for (size_t x = 0; x < scores.size(); ++x) {
            const unsigned long long rank = st[gphash::kTiesTaken];
            if (gphash::is_tie(scores[x], threshold)) st[gphash::kTiesTaken]++;
            if (gphash::admitted(scores[x], threshold, rank, ties)) out += (out.empty() ? "" : " ") + std::to_string(x);
        }
        std::printf("%s\n", out.empty() ? "-" : out.c_str());
    }
    return 0;
}
