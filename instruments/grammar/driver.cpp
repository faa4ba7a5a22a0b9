// Runs llama.cpp's own JSON-Schema-to-grammar converter (what Ollama and llama-server apply to every
// `format` / `response_format` schema) for bench/grammar.
//   driver < schema.json          prints the grammar of one schema
//   driver --lines < schemas.jsonl  one JSON line out per schema in: {"bytes": n, "rules": r} or {"error": "..."}
#include "common/json-schema-to-grammar.h"
#include "nlohmann/json.hpp"

#include <iostream>
#include <iterator>
#include <string>

using json = nlohmann::ordered_json;

static json convert(const std::string & text) {
    try {
        // Ollama parses the schema text into an ordered_json and converts it, as here (llama/sampling_ext.cpp).
        const std::string grammar = json_schema_to_grammar(json::parse(text));
        size_t rules = 0;
        for (char c : grammar) rules += c == '\n';
        return json{{"bytes", grammar.size()}, {"rules", rules}};
    } catch (const std::exception & e) {
        return json{{"error", e.what()}};
    }
}

int main(int argc, char ** argv) {
    std::ios::sync_with_stdio(false);
    if (argc > 1 && std::string(argv[1]) == "--lines") {
        std::string line;
        while (std::getline(std::cin, line)) {
            if (line.empty()) continue;
            std::cout << convert(line).dump() << '\n';
        }
        return 0;
    }
    const std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    try {
        std::cout << json_schema_to_grammar(json::parse(text));
        return 0;
    } catch (const std::exception & e) {
        std::cerr << e.what() << '\n';
        return 1;
    }
}
