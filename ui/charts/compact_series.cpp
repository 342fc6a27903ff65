#include "ui/charts/compact_series.h"

#include <cmath>

namespace ringmaster::ui {

qint64 StepColumn::operator[](std::size_t i) const
{
    if (m_implicit) return m_first + static_cast<qint64>(i) * m_delta;
    const std::uint32_t offset = m_offsets[i];
    if (offset == kWide) return m_wide.at(i);
    return m_bases[i >> kBlockShift] + static_cast<qint64>(offset);
}

void StepColumn::push_back(qint64 step)
{
    if (m_implicit) {
        if (m_size == 0) m_first = step;
        else if (m_size == 1) m_delta = step - m_first;
        else if (step != m_first + static_cast<qint64>(m_size) * m_delta) makeExplicit();
        if (m_implicit) {
            ++m_size;
            return;
        }
    }
    pushExplicit(step);
}

void StepColumn::makeExplicit()
{
    const std::size_t count = m_size;
    const qint64 first = m_first, delta = m_delta;
    m_implicit = false;
    m_size = 0;
    for (std::size_t i = 0; i < count; ++i) pushExplicit(first + static_cast<qint64>(i) * delta);
}

void StepColumn::pushExplicit(qint64 step)
{
    const std::size_t index = m_size++;
    if ((index >> kBlockShift) == m_bases.size()) m_bases.push_back(step);
    const qint64 offset = step - m_bases[index >> kBlockShift];
    if (offset >= 0 && offset < static_cast<qint64>(kWide)) {
        m_offsets.push_back(static_cast<std::uint32_t>(offset));
    } else {
        m_offsets.push_back(kWide);
        m_wide[index] = step;
    }
}

void StepColumn::truncate(std::size_t count)
{
    if (count >= m_size) return;
    if (count == 0) {
        clear();
        return;
    }
    m_size = count;
    if (m_implicit) return;
    m_offsets.truncate(count);
    m_bases.resize(((count - 1) >> kBlockShift) + 1);
    for (auto it = m_wide.begin(); it != m_wide.end();) it = it->first >= count ? m_wide.erase(it) : std::next(it);
}

void StepColumn::clear()
{
    m_implicit = true;
    m_first = m_delta = 0;
    m_size = 0;
    m_bases.clear();
    m_bases.shrink_to_fit();
    m_offsets.clear();
    m_wide.clear();
}

std::size_t StepColumn::memoryBytes() const
{
    return m_bases.capacity() * sizeof(qint64) + m_offsets.memoryBytes() + m_wide.size() * 32;
}

void WallColumn::push_back(double wallTime)
{
    if (m_offsets.empty()) m_origin = wallTime;
    m_offsets.push_back(static_cast<float>(wallTime - m_origin));
}

void MinMaxColumn::mergeIndex(Block* into, std::size_t index) const
{
    const float value = m_values[index];
    if (!std::isfinite(value)) return;
    if (into->low == kNoIndex || value < m_values[into->low]) into->low = static_cast<std::uint32_t>(index);
    if (into->high == kNoIndex || value > m_values[into->high]) into->high = static_cast<std::uint32_t>(index);
}

void MinMaxColumn::merge(Block* into, const Block& block) const
{
    if (block.low == kNoIndex) return;
    if (into->low == kNoIndex || m_values[block.low] < m_values[into->low]) into->low = block.low;
    if (into->high == kNoIndex || m_values[block.high] > m_values[into->high]) into->high = block.high;
}

void MinMaxColumn::push_back(double value)
{
    m_values.push_back(static_cast<float>(value));
    const std::size_t size = m_values.size();
    if (size & ((std::size_t(1) << kBaseShift) - 1)) return;
    Block block{kNoIndex, kNoIndex};
    for (std::size_t i = size - (std::size_t(1) << kBaseShift); i < size; ++i) mergeIndex(&block, i);
    if (m_levels.empty()) m_levels.emplace_back();
    m_levels[0].push_back(block);
    // Each completed pair of blocks completes one block a level up.
    for (std::size_t level = 0; m_levels[level].size() % 2 == 0; ++level) {
        Block up = m_levels[level][m_levels[level].size() - 2];
        merge(&up, m_levels[level][m_levels[level].size() - 1]);
        if (level + 1 == m_levels.size()) m_levels.emplace_back();
        m_levels[level + 1].push_back(up);
    }
}

void MinMaxColumn::truncate(std::size_t count)
{
    if (count >= m_values.size()) return;
    m_values.truncate(count);
    for (std::size_t level = 0; level < m_levels.size(); ++level) m_levels[level].truncate(count >> (kBaseShift + level));
}

void MinMaxColumn::clear()
{
    m_values.clear();
    m_levels.clear();
    m_levels.shrink_to_fit();
}

std::pair<std::size_t, std::size_t> MinMaxColumn::extremes(std::size_t first, std::size_t last) const
{
    Block found{kNoIndex, kNoIndex};
    last = std::min(last, m_values.size());
    std::size_t i = first;
    while (i < last) {
        const std::size_t base = std::size_t(1) << kBaseShift;
        if ((i & (base - 1)) != 0 || i + base > last || m_levels.empty()) {
            mergeIndex(&found, i++);
            continue;
        }
        // The largest block that starts at i and ends by `last`.
        std::size_t level = 0;
        while (level + 1 < m_levels.size()) {
            const std::size_t span = base << (level + 1);
            if ((i & (span - 1)) != 0 || i + span > last || (i >> (kBaseShift + level + 1)) >= m_levels[level + 1].size()) break;
            ++level;
        }
        merge(&found, m_levels[level][i >> (kBaseShift + level)]);
        i += base << level;
    }
    if (found.low == kNoIndex) return {kNone, kNone};
    return {found.low, found.high};
}

std::size_t MinMaxColumn::memoryBytes() const
{
    std::size_t bytes = m_values.memoryBytes() + m_levels.capacity() * sizeof(ChunkedColumn<Block>);
    for (const auto& level : m_levels) bytes += level.memoryBytes();
    return bytes;
}

} // namespace ringmaster::ui
