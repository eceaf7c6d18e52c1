// What the host check programs share: a key given in hex on an input line.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

// The bytes of hex (two digits a byte); false, leaving key empty, when hex is empty or of odd length.
inline bool parse_hex_key(const std::string& hex, std::vector<uint8_t>& key) {
    key.clear();
    if (hex.empty() || hex.size() % 2 != 0) {
        return false;
    }
    key.resize(hex.size() / 2);
    for (size_t i = 0; i < key.size(); ++i) {
        key[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
    }
    return true;
}
