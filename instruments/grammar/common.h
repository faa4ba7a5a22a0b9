// Stands in for llama.cpp's common/common.h when json-schema-to-grammar.cpp is compiled on its own: the
// real header pulls in llama.h and ggml; the converter only needs these three string helpers, written
// here with the behaviour of llama.cpp's common.cpp.
#pragma once

#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

inline std::string string_join(const std::vector<std::string> & values, const std::string & separator) {
    std::ostringstream out;
    for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) out << separator;
        out << values[i];
    }
    return out.str();
}

// Every piece between delimiters, empty ones included; no delimiter gives the whole string.
inline std::vector<std::string> string_split(const std::string & str, const std::string & delimiter) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t at = str.find(delimiter); at != std::string::npos; at = str.find(delimiter, start)) {
        parts.push_back(str.substr(start, at - start));
        start = at + delimiter.length();
    }
    parts.push_back(str.substr(start));
    return parts;
}

inline std::string string_repeat(const std::string & str, size_t n) {
    std::string out;
    out.reserve(str.length() * n);
    for (size_t i = 0; i < n; ++i) out += str;
    return out;
}
