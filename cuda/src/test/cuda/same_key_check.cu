// Host-side run of the pipeline's semantics stage (pipeline/pipe_semantics.cuh) on the rules of
// same_key_rules.cuh, built by nvcc and run by SameKeyRulesAgreementTest, which compares what it
// prints with the Java model (GroupSemanticsModel) and with serial execution.
//
// Reads one batch per line: groups separated by ';', each "P:K K K" with P the key's presence at
// batch start (0 or 1) and K the kinds of its operations in batch order (OpKind ordinals). Runs what
// the kernels run, one position at a time instead of one thread each: the presence max-scan, the
// source scan's input and max-scan, every position's outcome and output source, every group's net
// effect. Positions hold operations in reverse order (operation n-1-i at position i), so that the
// rules' lookups through the sorted order are exercised.
//
// Prints "C,S ... | A,S ...": per position its outcome code and output source, per group its net
// action and the source it writes; a source is a position, P (the pool's value) or - (none).
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "gphash/table/same_key_rules.cuh"

namespace {

// A source (an operation index, kVsrcPool or kVsrcNone) as the test reads it: a position, P or -.
std::string source_text(uint32_t src, size_t n) {
    if (src == gphash::kVsrcPool) return "P";
    if (src == gphash::kVsrcNone) return "-";
    return std::to_string(n - 1 - src);
}

}  // namespace

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) continue;
        std::vector<uint32_t> start;
        std::vector<uint32_t> end;
        std::vector<bool> present0;
        std::vector<int> kind_by_pos;
        std::istringstream groups(line);
        std::string group;
        while (std::getline(groups, group, ';')) {
            const size_t colon = group.find(':');
            if (colon == std::string::npos) {
                std::fprintf(stderr, "bad group: %s\n", group.c_str());
                return 2;
            }
            present0.push_back(group.substr(0, colon) == "1");
            start.push_back(static_cast<uint32_t>(kind_by_pos.size()));
            std::istringstream kinds(group.substr(colon + 1));
            int k;
            while (kinds >> k) kind_by_pos.push_back(k);
            end.push_back(static_cast<uint32_t>(kind_by_pos.size()));
        }
        const size_t n = kind_by_pos.size();
        std::vector<uint8_t> kinds(n);
        std::vector<uint32_t> op(n);
        std::vector<uint32_t> group_of(n);
        for (size_t i = 0; i < n; ++i) {
            op[i] = static_cast<uint32_t>(n - 1 - i);
            kinds[op[i]] = static_cast<uint8_t>(kind_by_pos[i]);
        }
        for (size_t g = 0; g < start.size(); ++g) {
            for (uint32_t i = start[g]; i < end[g]; ++i) group_of[i] = static_cast<uint32_t>(g);
        }
        std::vector<int32_t> last_set(n);
        std::vector<int32_t> last_src(n);
        const gphash::SortedOps s{kinds.data(), op.data(), last_set.data(), last_src.data()};
        // Scan 1 over the whole sorted batch (pipe_heads gives the input, device_scan.cuh the max).
        for (size_t i = 0; i < n; ++i) {
            const int32_t v = gphash::sets_presence(gphash::kind_at(s, static_cast<int32_t>(i))) ? static_cast<int32_t>(i) : -1;
            last_set[i] = i == 0 || v > last_set[i - 1] ? v : last_set[i - 1];
        }
        // Scan 2: its input needs the presence before each position (pipe_source_input).
        for (size_t i = 0; i < n; ++i) {
            const uint32_t g = group_of[i];
            const bool present = gphash::presence_through(s, start[g], present0[g], static_cast<int64_t>(i) - 1);
            const int32_t v = gphash::sets_source(gphash::kind_at(s, static_cast<int32_t>(i)), present) ? static_cast<int32_t>(i) : -1;
            last_src[i] = i == 0 || v > last_src[i - 1] ? v : last_src[i - 1];
        }
        // Every position's outcome and output source (pipe_outcome).
        std::string out;
        for (size_t i = 0; i < n; ++i) {
            const uint32_t g = group_of[i];
            const int kind = gphash::kind_at(s, static_cast<int32_t>(i));
            const bool present = gphash::presence_through(s, start[g], present0[g], static_cast<int64_t>(i) - 1);
            const uint32_t src = gphash::returns_value(kind, present)
                    ? gphash::source_through(s, start[g], present0[g], static_cast<int64_t>(i) - 1)
                    : gphash::kVsrcNone;
            out += std::to_string(gphash::outcome_of(kind, present)) + "," + source_text(src, n) + " ";
        }
        out += "|";
        // Every group's net effect (pipe_net).
        for (size_t g = 0; g < start.size(); ++g) {
            const int64_t last = static_cast<int64_t>(end[g]) - 1;
            const bool present = gphash::presence_through(s, start[g], present0[g], last);
            const uint32_t src = gphash::source_through(s, start[g], present0[g], last);
            const uint32_t action = gphash::net_action(present0[g], present, src);
            const bool writes = action == gphash::kActUpdate || action == gphash::kActInsert;
            out += " " + std::to_string(action) + "," + (writes ? source_text(src, n) : std::string("-"));
        }
        std::printf("%s\n", out.c_str());
    }
    return 0;
}
