#include "trainer/slurm_hostlist.h"

#include <cctype>
#include <cstdint>

namespace ringmaster::trainer::slurm {
namespace {

// 18 digits always fit in an unsigned 64-bit integer; node numbers are far shorter.
constexpr std::size_t kMaxDigits = 18;

struct Range
{
    std::uint64_t low = 0;
    std::uint64_t high = 0;
    std::size_t width = 0; // digits of the lower bound as written: "01-04" pads to 2
};

// A piece of one host expression: literal text, or a bracket group (ranges not empty).
struct Part
{
    std::string literal;
    std::vector<Range> ranges;
};

using HostPattern = std::vector<Part>;

bool isHostChar(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
}

std::uint64_t parseNumber(const std::string& digits, const std::string& item)
{
    if (digits.empty() || digits.size() > kMaxDigits) {
        throw ListSyntaxError("'[" + item + "]' holds an empty or over-long number");
    }
    std::uint64_t value = 0;
    for (char c : digits) {
        if (!std::isdigit(static_cast<unsigned char>(c))) {
            throw ListSyntaxError("'" + std::string(1, c) + "' inside brackets: only numbers and ranges, e.g. [01-04,07]");
        }
        value = value * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return value;
}

std::vector<Range> parseGroup(const std::string& body)
{
    if (body.empty()) throw ListSyntaxError("empty brackets '[]'");
    std::vector<Range> ranges;
    std::size_t start = 0;
    while (start <= body.size()) {
        const std::size_t comma = body.find(',', start);
        const std::string item = body.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (item.empty()) throw ListSyntaxError("empty item in '[" + body + "]'");
        const std::size_t dash = item.find('-');
        Range range;
        const std::string lowText = item.substr(0, dash);
        range.low = parseNumber(lowText, body);
        range.high = dash == std::string::npos ? range.low : parseNumber(item.substr(dash + 1), body);
        range.width = lowText.size();
        if (range.high < range.low) throw ListSyntaxError("range '" + item + "' runs backwards");
        ranges.push_back(range);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return ranges;
}

std::vector<HostPattern> parseHostlist(const std::string& text)
{
    if (text.empty()) throw ListSyntaxError("the host list is empty");
    std::vector<HostPattern> hosts;
    HostPattern current;
    std::string literal;
    auto endHost = [&]() {
        if (!literal.empty()) current.push_back({literal, {}});
        literal.clear();
        if (current.empty()) throw ListSyntaxError("empty host name (two commas in a row, or one at an end)");
        hosts.push_back(std::move(current));
        current.clear();
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == ',') {
            endHost();
        } else if (c == '[') {
            const std::size_t close = text.find(']', i + 1);
            if (close == std::string::npos) throw ListSyntaxError("'[' is never closed");
            const std::string body = text.substr(i + 1, close - i - 1);
            if (body.find('[') != std::string::npos) throw ListSyntaxError("'[' inside brackets");
            if (!literal.empty()) current.push_back({literal, {}});
            literal.clear();
            current.push_back({"", parseGroup(body)});
            i = close;
        } else if (c == ']') {
            throw ListSyntaxError("']' without a '['");
        } else if (isHostChar(c)) {
            literal += c;
        } else {
            throw ListSyntaxError("unexpected character '" + std::string(1, c) + "'");
        }
    }
    endHost();
    return hosts;
}

std::string formatNumber(std::uint64_t value, std::size_t width)
{
    std::string digits = std::to_string(value);
    if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
    return digits;
}

std::uint64_t groupSize(const std::vector<Range>& ranges)
{
    std::uint64_t size = 0;
    for (const auto& range : ranges) size += range.high - range.low + 1;
    return size;
}

// The n-th value of a bracket group, n < groupSize.
std::string groupValue(const std::vector<Range>& ranges, std::uint64_t n)
{
    for (const auto& range : ranges) {
        const std::uint64_t count = range.high - range.low + 1;
        if (n < count) return formatNumber(range.low + n, range.width);
        n -= count;
    }
    return {}; // unreachable for n < groupSize
}

void expandPattern(const HostPattern& pattern, std::size_t part, std::string prefix, std::vector<std::string>& out)
{
    if (part == pattern.size()) {
        out.push_back(std::move(prefix));
        return;
    }
    const Part& piece = pattern[part];
    if (piece.ranges.empty()) {
        expandPattern(pattern, part + 1, prefix + piece.literal, out);
        return;
    }
    const std::uint64_t size = groupSize(piece.ranges);
    for (std::uint64_t n = 0; n < size; ++n) expandPattern(pattern, part + 1, prefix + groupValue(piece.ranges, n), out);
}

} // namespace

std::string firstHost(const std::string& hostlist)
{
    const auto hosts = parseHostlist(hostlist);
    std::string host;
    for (const auto& piece : hosts.front()) host += piece.ranges.empty() ? piece.literal : groupValue(piece.ranges, 0);
    return host;
}

std::vector<std::string> expandHostlist(const std::string& hostlist, std::size_t maxHosts)
{
    const auto hosts = parseHostlist(hostlist);
    std::uint64_t total = 0;
    for (const auto& pattern : hosts) {
        std::uint64_t count = 1;
        for (const auto& piece : pattern) {
            if (piece.ranges.empty()) continue;
            const std::uint64_t size = groupSize(piece.ranges);
            if (size > maxHosts || count > maxHosts / size) count = maxHosts + 1;
            else count *= size;
        }
        total += count;
        if (total > maxHosts) throw ListSyntaxError("expands to more than " + std::to_string(maxHosts) + " hosts");
    }
    std::vector<std::string> out;
    out.reserve(static_cast<std::size_t>(total));
    for (const auto& pattern : hosts) expandPattern(pattern, 0, "", out);
    return out;
}

std::vector<int> expandTaskCounts(const std::string& text, std::size_t maxNodes)
{
    if (text.empty()) throw ListSyntaxError("the task count list is empty");
    std::vector<int> counts;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        // N, or N(xM): M nodes with N tasks each.
        std::string countText = item;
        std::uint64_t repeat = 1;
        if (const std::size_t open = item.find('('); open != std::string::npos) {
            if (item.size() < open + 4 || item.compare(open, 2, "(x") != 0 || item.back() != ')') {
                throw ListSyntaxError("'" + item + "' is not N or N(xM)");
            }
            countText = item.substr(0, open);
            const std::string repeatText = item.substr(open + 2, item.size() - open - 3);
            if (repeatText.find_first_not_of("0123456789") != std::string::npos || repeatText.size() > kMaxDigits) {
                throw ListSyntaxError("'" + item + "' is not N or N(xM)");
            }
            repeat = std::stoull(repeatText);
        }
        if (countText.empty() || countText.size() > 9 || countText.find_first_not_of("0123456789") != std::string::npos) {
            throw ListSyntaxError("'" + item + "' is not N or N(xM)");
        }
        const int count = std::stoi(countText);
        if (count < 1 || repeat < 1) throw ListSyntaxError("'" + item + "' counts zero tasks or nodes");
        if (repeat > maxNodes || counts.size() + repeat > maxNodes) {
            throw ListSyntaxError("more than " + std::to_string(maxNodes) + " nodes");
        }
        counts.insert(counts.end(), static_cast<std::size_t>(repeat), count);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return counts;
}

} // namespace ringmaster::trainer::slurm
