// CSV tables: a small parser for the RFC 4180 subset that spreadsheets and pandas write (comma
// separated, fields optionally in double quotes with "" for a quote inside, quoted fields may span
// lines, CRLF or LF, last newline optional, a UTF-8 byte-order mark ignored, blank lines skipped), then
// the table's rules: numeric features, one label column. Line numbers in errors are the file's physical
// lines, 1-based, the header being line 1; a record spanning lines is named by the line it starts on.
#include "trainer/data/csv_table.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "trainer/errors.h"

namespace ringmaster::trainer {
namespace {

constexpr const char* kUtf8ByteOrderMark = "\xEF\xBB\xBF";
constexpr const char* kFieldSpace = " \t";
// Integers above 2^53 are not exact in a double: such labels are not class indices.
constexpr double kLargestExactInteger = 9007199254740992.0;

struct CsvRecord
{
    std::vector<std::string> fields;
    std::int64_t line = 0;
};

class CsvParser
{
public:
    CsvParser(const std::string& text, const std::string& prefix) : text_(text), prefix_(prefix)
    {
        if (text_.compare(0, std::strlen(kUtf8ByteOrderMark), kUtf8ByteOrderMark) == 0) {
            pos_ = std::strlen(kUtf8ByteOrderMark);
        }
    }

    std::vector<CsvRecord> records()
    {
        std::vector<CsvRecord> result;
        while (pos_ < text_.size()) {
            CsvRecord record;
            record.line = line_;
            bool quotedAny = false;
            bool more = true;
            while (more) {
                bool quoted = false;
                record.fields.push_back(field(quoted));
                quotedAny = quotedAny || quoted;
                more = atComma();
                if (more) ++pos_;
            }
            endOfRecord();
            const bool blank = record.fields.size() == 1 && record.fields[0].empty() && !quotedAny;
            if (!blank) result.push_back(std::move(record));
        }
        return result;
    }

private:
    bool atComma() const { return pos_ < text_.size() && text_[pos_] == ','; }
    bool atEndOfRecord() const
    {
        return pos_ >= text_.size() || text_[pos_] == '\n' ||
               (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ||
               (text_[pos_] == '\r' && pos_ + 1 == text_.size());
    }
    void endOfRecord()
    {
        if (pos_ < text_.size() && text_[pos_] == '\r') ++pos_;
        if (pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
        ++line_;
    }

    std::string field(bool& quoted)
    {
        std::string value;
        if (pos_ < text_.size() && text_[pos_] == '"') {
            quoted = true;
            const std::int64_t openedOn = line_;
            ++pos_;
            while (true) {
                if (pos_ >= text_.size()) {
                    throw UsageError(prefix_ + "line " + std::to_string(openedOn) +
                                     ": a quoted field is never closed (a \" is missing)");
                }
                const char c = text_[pos_++];
                if (c == '"') {
                    if (pos_ < text_.size() && text_[pos_] == '"') {
                        value += '"';
                        ++pos_;
                        continue;
                    }
                    break;
                }
                if (c == '\n') ++line_;
                value += c;
            }
            if (!atComma() && !atEndOfRecord()) {
                throw UsageError(prefix_ + "line " + std::to_string(line_) +
                                 ": text after a closing quote (write \"\" for a quote inside a quoted field)");
            }
            return value;
        }
        while (!atComma() && !atEndOfRecord()) value += text_[pos_++];
        return value;
    }

    const std::string& text_;
    const std::string& prefix_;
    std::size_t pos_ = 0;
    std::int64_t line_ = 1;
};

std::string trimmed(const std::string& text)
{
    const auto first = text.find_first_not_of(kFieldSpace);
    if (first == std::string::npos) return {};
    return text.substr(first, text.find_last_not_of(kFieldSpace) - first + 1);
}

// The whole field (spaces around it allowed) as a number; NaN and infinity parse (the caller decides).
bool parseNumber(const std::string& field, double& value)
{
    const std::string text = trimmed(field);
    if (text.empty()) return false;
    char* end = nullptr;
    errno = 0;
    value = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size();
}

bool finiteAsFloat(double value)
{
    return std::isfinite(value) && std::isfinite(static_cast<float>(value));
}

std::string joinColumns(const std::vector<std::string>& names)
{
    std::string joined;
    for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
    return joined;
}

std::string readText(const std::string& path, const std::string& prefix)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError(prefix + "cannot open it: " + std::strerror(errno));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw UsageError(prefix + "cannot read it: " + std::strerror(errno));
    return text;
}

struct LabelColumn
{
    std::vector<std::string> values;  // trimmed, one per data row
    std::vector<std::int64_t> lines;
    std::string name;
};

// Text labels: indices into `classes` when given (a validation file), else into the sorted distinct labels.
torch::Tensor stringLabels(const LabelColumn& labels, std::vector<std::string> classes, const std::string& prefix,
                           std::vector<std::string>& classNames)
{
    const bool fixedClasses = !classes.empty();
    if (!fixedClasses) {
        const std::set<std::string> unique(labels.values.begin(), labels.values.end());
        classes.assign(unique.begin(), unique.end());
    }
    std::map<std::string, std::int64_t> indexOf;
    for (std::size_t i = 0; i < classes.size(); ++i) indexOf.emplace(classes[i], static_cast<std::int64_t>(i));
    auto targets = torch::empty({static_cast<std::int64_t>(labels.values.size())}, torch::kInt64);
    auto* out = targets.data_ptr<std::int64_t>();
    for (std::size_t row = 0; row < labels.values.size(); ++row) {
        const auto found = indexOf.find(labels.values[row]);
        if (found == indexOf.end()) {
            throw UsageError(prefix + "line " + std::to_string(labels.lines[row]) + ": label \"" +
                             labels.values[row] + "\" is not one of the training classes (" + joinColumns(classes) +
                             ")");
        }
        out[row] = found->second;
    }
    classNames = classes;
    return targets;
}

// Integer-valued everywhere: int64 class indices; other numbers: float32 targets; any text: classes.
torch::Tensor labelTensor(const LabelColumn& labels, const std::vector<std::string>& classes,
                          const std::string& prefix, std::vector<std::string>& classNames)
{
    const auto count = static_cast<std::int64_t>(labels.values.size());
    for (std::size_t row = 0; row < labels.values.size(); ++row) {
        if (labels.values[row].empty()) {
            throw UsageError(prefix + "line " + std::to_string(labels.lines[row]) + ": the label (column " +
                             labels.name + ") is empty");
        }
    }
    if (!classes.empty()) return stringLabels(labels, classes, prefix, classNames);
    std::vector<double> numbers(labels.values.size());
    for (std::size_t row = 0; row < labels.values.size(); ++row) {
        if (!parseNumber(labels.values[row], numbers[row])) {
            return stringLabels(labels, {}, prefix, classNames);
        }
    }
    bool integers = true;
    for (std::size_t row = 0; row < numbers.size(); ++row) {
        if (!finiteAsFloat(numbers[row])) {
            throw UsageError(prefix + "line " + std::to_string(labels.lines[row]) + ": the label (column " +
                             labels.name + ") is NaN or infinite: " + labels.values[row]);
        }
        integers = integers && numbers[row] == std::floor(numbers[row]) && std::fabs(numbers[row]) <= kLargestExactInteger;
    }
    if (!integers) {
        auto targets = torch::empty({count}, torch::kFloat32);
        std::transform(numbers.begin(), numbers.end(), targets.data_ptr<float>(),
                       [](double v) { return static_cast<float>(v); });
        return targets;
    }
    auto targets = torch::empty({count}, torch::kInt64);
    for (std::size_t row = 0; row < numbers.size(); ++row) {
        if (numbers[row] < 0) {
            throw UsageError(prefix + "line " + std::to_string(labels.lines[row]) + ": negative class label " +
                             labels.values[row] + " (column " + labels.name + "); class labels are 0, 1, 2, ...");
        }
        targets.data_ptr<std::int64_t>()[row] = static_cast<std::int64_t>(numbers[row]);
    }
    return targets;
}

} // namespace

LoadedData readCsvTable(const std::string& path, const std::string& labelColumn, const std::string& flag,
                        const std::vector<std::string>& classes)
{
    const std::string prefix = flag + " " + path + ": ";
    const std::string text = readText(path, prefix);
    const auto records = CsvParser(text, prefix).records();
    if (records.empty()) throw UsageError(prefix + "is empty; a CSV table needs a header row and one row per sample");

    std::vector<std::string> header;
    for (const auto& name : records[0].fields) header.push_back(trimmed(name));
    const auto columns = static_cast<std::int64_t>(header.size());
    std::int64_t labelIndex = columns - 1;
    if (!labelColumn.empty()) {
        const auto found = std::find(header.begin(), header.end(), labelColumn);
        if (found == header.end()) {
            throw UsageError(prefix + "no column named " + labelColumn + " for --label-column (columns: " +
                             joinColumns(header) + ")");
        }
        labelIndex = found - header.begin();
    }
    if (columns < 2) {
        throw UsageError(prefix + "has only the column " + header[0] +
                         "; a CSV table needs feature columns besides the label column");
    }
    const auto rows = static_cast<std::int64_t>(records.size()) - 1;
    if (rows == 0) {
        throw UsageError(prefix + "line " + std::to_string(records[0].line) +
                         " is the header and no data rows follow");
    }

    // Every row's width is checked before the feature tensor is allocated: rows x columns is then bounded by the
    // fields the file holds, never by a long header times many short rows (a few hundred KiB asking for GiBs).
    for (std::int64_t row = 0; row < rows; ++row) {
        const auto& record = records[row + 1];
        const auto fields = static_cast<std::int64_t>(record.fields.size());
        if (fields != columns) {
            throw UsageError(prefix + "line " + std::to_string(record.line) + " has " + std::to_string(fields) +
                             " fields, the header has " + std::to_string(columns));
        }
    }
    LoadedData data;
    data.inputs = torch::empty({rows, columns - 1}, torch::kFloat32);
    auto* features = data.inputs.data_ptr<float>();
    LabelColumn labels;
    labels.name = header[labelIndex];
    for (std::int64_t row = 0; row < rows; ++row) {
        const auto& record = records[row + 1];
        for (std::int64_t column = 0; column < columns; ++column) {
            const std::string& field = record.fields[column];
            if (column == labelIndex) {
                labels.values.push_back(trimmed(field));
                labels.lines.push_back(record.line);
                continue;
            }
            double value = 0;
            const std::string where = prefix + "line " + std::to_string(record.line) + ", column " + header[column];
            if (!parseNumber(field, value)) throw UsageError(where + ": \"" + field + "\" is not a number");
            if (!finiteAsFloat(value)) {
                throw UsageError(where + ": " + trimmed(field) + " is NaN or infinite (or beyond float32's range)");
            }
            *features++ = static_cast<float>(value);
        }
    }
    data.targets = labelTensor(labels, classes, prefix, data.classNames);
    const std::string kind = data.targets.scalar_type() == torch::kFloat32
                                 ? "regression targets"
                                 : (data.classNames.empty() ? "integer class labels"
                                                            : std::to_string(data.classNames.size()) + " classes");
    data.description = "CSV table " + path + " (" + std::to_string(rows) + " rows, " + std::to_string(columns - 1) +
                       " features, label column " + labels.name + ": " + kind + ")";
    return data;
}

} // namespace ringmaster::trainer
