// Prints the trainer's option table (core/protocol/trainer_options.h), for the tests that check every row reaches
// --help, the manual page, the job form and the job files. No LibTorch, no Qt.
//   ringmaster-option-table              one JSON array, a row an object ({key, flag, type, default, choices, bounds,
//                                        metavar, group, label, help, owner})
//   ringmaster-option-table --fuzz-dict  tests/fuzz/trainer_job.dict: every key and named value, then the job file's
//                                        own words and numbers at the edges of the parsers
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include <iostream>

#include <nlohmann/json.hpp>

#include "protocol/trainer_options.h"

namespace rp = ringmaster::protocol;

namespace {

void printFuzzDictionary()
{
    std::cout << "# libFuzzer dictionary for fuzz_trainer_job, made by ringmaster-option-table --fuzz-dict from the trainer's\n"
                 "# option table (core/protocol/trainer_options.h); cli.trainer_options checks that it is up to date.\n";
    std::vector<std::string> words;
    const auto add = [&words](const std::string& word) {
        if (std::find(words.begin(), words.end(), word) == words.end()) words.push_back(word);
    };
    for (const rp::TrainerOption& o : rp::trainerOptions()) std::cout << "\"\\\"" << o.key << "\\\"\"\n";
    for (const char* word : {"trainer", "version", "launch", "true", "false", "null"}) add(word);
    for (const rp::TrainerOption& o : rp::trainerOptions()) {
        for (std::size_t i = 0; i < rp::optionChoiceCount(o); ++i) add(rp::optionChoice(o, i));
    }
    for (const char* word : {"1e400", "-0", "9223372036854775808", "4294967297"}) add(word);
    for (const std::string& word : words) std::cout << "\"" << word << "\"\n";
}

} // namespace

int main(int argc, char** argv)
{
    if (argc > 1 && std::string(argv[1]) == "--fuzz-dict") {
        printFuzzDictionary();
        return 0;
    }
    const char* types[] = {"text", "integer", "real", "boolean", "choice"};
    nlohmann::json rows = nlohmann::json::array();
    for (const rp::TrainerOption& o : rp::trainerOptions()) {
        nlohmann::json bounds = nlohmann::json::object();
        if (std::isfinite(o.bounds.low)) bounds["low"] = o.bounds.low, bounds["low_open"] = o.bounds.lowOpen;
        if (std::isfinite(o.bounds.high)) bounds["high"] = o.bounds.high, bounds["high_open"] = o.bounds.highOpen;
        nlohmann::json choices = nlohmann::json::array();
        for (std::size_t i = 0; i < rp::optionChoiceCount(o); ++i) choices.push_back(rp::optionChoice(o, i));
        rows.push_back({{"key", o.key}, {"flag", rp::optionFlagOf(o.key)}, {"type", types[static_cast<int>(o.type)]},
                        {"default", o.defaultValue}, {"choices", choices}, {"bounds", bounds}, {"metavar", o.metavar},
                        {"group", o.group}, {"label", o.label}, {"help", o.help},
                        {"owner", o.owner == rp::OptionOwner::User ? "user" : "launcher"}});
    }
    std::cout << rows.dump(1) << "\n";
    return 0;
}
