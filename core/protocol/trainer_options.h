#pragma once
// The trainer's options, declared once: each option's job-file key (and so its flag), type, default, allowed
// range or choices, group, the job form's label and a line of help. ringmaster-trainer parses and checks its
// flags and job files by this table and prints its --help from it (so help2man's manual page and the bash
// completion follow); the launcher types the trainer flags it passes on by it and its default job takes its
// values from it; the app's job form takes each trainer field's label, tooltip, range, choices and default from it,
// and lays out the options it has no field of its own for from it. Plain C++17: no Qt, no LibTorch, so the trainer,
// the supervisor and the widgets all read the same rows. tests/cli/test_trainer_options.py checks that every row
// is in --help and the manual page, tests/ui/tst_trainer_option_fields.cpp that every row is in the form.

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace ringmaster::protocol {

enum class OptionType {
    Text,     // any string ("" when the default is none)
    Integer,  // a whole number within the bounds
    Real,     // a finite number within the bounds
    Boolean,  // true or false (also 1/0, yes/no on the command line)
    Choice,   // one of `choices`
};

// Who sets an option in a launched run: the user (the form's field, a flag, the job file) or the launcher itself
// (--out is the run directory, --device where the ranks run, --resume the checkpoint picked): the form has no
// field for those, the launcher's own flag of that name sets them.
enum class OptionOwner { User, Launcher };

// A number's allowed range; an open end excludes its value. No bound: the type's own limits.
struct OptionBounds
{
    double low = -std::numeric_limits<double>::infinity();
    double high = std::numeric_limits<double>::infinity();
    bool lowOpen = false;
    bool highOpen = false;
};

struct TrainerOption
{
    const char* key;          // the job file's key: "batch_size"; the flag is "--batch-size"
    OptionType type;
    const char* defaultValue; // as a flag's text; "" for a Text option without one
    const char* choices;      // Choice: "a|b|c"; Text: suggested values (the form's list, the completion), or ""
    OptionBounds bounds;      // Integer and Real
    const char* metavar;      // the value's name in --help: N, X, SEC, PATH (Choice and Boolean show their values)
    const char* group;        // the --help section and the form's box of the advanced options
    const char* label;        // the job form's label
    const char* help;         // one line; says what 0 or "auto" mean where they mean something
    OptionOwner owner = OptionOwner::User;
};

// Every option, in --help order (grouped).
const TrainerOption* trainerOptionsBegin();
const TrainerOption* trainerOptionsEnd();
struct TrainerOptionRange
{
    const TrainerOption* begin() const { return trainerOptionsBegin(); }
    const TrainerOption* end() const { return trainerOptionsEnd(); }
};
inline TrainerOptionRange trainerOptions() { return {}; }

// The row of KEY ("batch_size" or "batch-size"), or nullptr.
const TrainerOption* findTrainerOption(std::string_view key);
// KEY's row; the caller names a key of the table (a programming error otherwise: it aborts).
const TrainerOption& trainerOption(std::string_view key);

// "batch_size" <-> "batch-size" (the flag without its dashes), and the flag "--batch-size".
std::string optionKeyOf(std::string_view flagOrKey);
std::string optionFlagNameOf(std::string_view key);
std::string optionFlagOf(std::string_view key);

// The Choice values (or a Text option's suggestions) one by one.
std::size_t optionChoiceCount(const TrainerOption& option);
std::string optionChoice(const TrainerOption& option, std::size_t index);
bool isOptionChoice(const TrainerOption& option, std::string_view value);

// Checks VALUE (a flag's text) against the row's type, bounds and choices. Returns "" when it fits, else what is
// wrong, for a message that starts with the flag: "must be >= 1, got 0", "unknown value 'x' (valid: a|b)".
std::string optionValueProblem(const TrainerOption& option, std::string_view value);
// The bounds as words: ">= 1", "> 0", "in [0, 1)", or "" without bounds.
std::string optionBoundsText(const OptionBounds& bounds);
// How a boolean flag's text reads: true/1/yes or false/0/no; returns false when it is neither.
bool parseOptionBoolean(std::string_view text, bool* value);

// The option's help with its bounds, default and who sets it: "passes over the training set (>= 1; default 1)".
std::string optionHelpText(const TrainerOption& option);

// The flags part of ringmaster-trainer --help: each group, then each option on its own line with its values,
// default and help.
std::string trainerOptionsUsage();

} // namespace ringmaster::protocol
