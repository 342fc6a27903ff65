#pragma once
// Compact columns for long scalar series (ScalarSeriesStore): a run of 10,000,000 points must fit in
// memory and be drawn without losing a spike. Widget-free.
//  - ChunkedColumn: a growable array in 64Ki-element chunks, so growing never doubles the memory held
//    (a std::vector at capacity holds up to 2x its size) and never copies more than one chunk.
//  - StepColumn: integer steps, implicit (first + i x delta, 0 bytes a point) while they are evenly
//    spaced, else 4 bytes a point (a 32-bit offset from a base per 4,096 points; a rare larger jump
//    is kept exactly aside).
//  - WallColumn: wall times as float32 seconds from the column's first one (4 bytes a point; about
//    0.1 ms resolution an hour in, 8 ms a day in).
//  - MinMaxColumn: float32 values (4 bytes a point; a double is rounded to the nearest float32) with a
//    min/max pyramid: the index of the smallest and the largest finite value of every block of 16
//    points, of every 32, 64, ... (about 1 byte a point), so the extremes of any index range come in
//    O(log n) (series_reduction.h draws one min and one max per pixel column from it).

#include <QtGlobal>

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ringmaster::ui {

template <typename T>
class ChunkedColumn
{
public:
    static constexpr std::size_t kShift = 16;
    static constexpr std::size_t kChunk = std::size_t(1) << kShift;

    std::size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    T operator[](std::size_t i) const { return m_chunks[i >> kShift][i & (kChunk - 1)]; }
    void push_back(T value)
    {
        // Each chunk grows as a vector (doubling up to kChunk, a power of two): a series holds at most half
        // a chunk spare (reserving whole chunks held up to a whole one: 0.26 bytes a point of a float column
        // at 1,000,000 points).
        if (m_chunks.empty() || m_chunks.back().size() == kChunk) m_chunks.emplace_back();
        m_chunks.back().push_back(value);
        ++m_size;
    }
    // Keeps the first `count` elements (count <= size()).
    void truncate(std::size_t count)
    {
        if (count >= m_size) return;
        m_chunks.resize((count + kChunk - 1) >> kShift);
        if (!m_chunks.empty()) m_chunks.back().resize(count - ((m_chunks.size() - 1) << kShift));
        m_size = count;
    }
    void clear()
    {
        m_chunks.clear();
        m_chunks.shrink_to_fit();
        m_size = 0;
    }
    std::size_t memoryBytes() const
    {
        std::size_t bytes = m_chunks.capacity() * sizeof(std::vector<T>);
        for (const auto& chunk : m_chunks) bytes += chunk.capacity() * sizeof(T);
        return bytes;
    }

private:
    std::vector<std::vector<T>> m_chunks;
    std::size_t m_size = 0;
};

class StepColumn
{
public:
    std::size_t size() const { return m_size; }
    qint64 operator[](std::size_t i) const;
    void push_back(qint64 step);
    void truncate(std::size_t count);
    void clear();
    // True while every step so far is first + i x delta (nothing stored per point).
    bool implicit() const { return m_implicit; }
    std::size_t memoryBytes() const;

private:
    static constexpr std::size_t kBlockShift = 12; // a base per 4,096 points
    static constexpr std::uint32_t kWide = 0xffffffffu; // the offset did not fit: see m_wide

    void makeExplicit();
    void pushExplicit(qint64 step);

    bool m_implicit = true;
    qint64 m_first = 0, m_delta = 0;
    std::size_t m_size = 0;
    std::vector<qint64> m_bases;
    ChunkedColumn<std::uint32_t> m_offsets;
    std::unordered_map<std::size_t, qint64> m_wide;
};

class WallColumn
{
public:
    std::size_t size() const { return m_offsets.size(); }
    double operator[](std::size_t i) const { return m_origin + static_cast<double>(m_offsets[i]); }
    void push_back(double wallTime);
    void truncate(std::size_t count) { m_offsets.truncate(count); }
    void clear() { m_offsets.clear(); }
    std::size_t memoryBytes() const { return m_offsets.memoryBytes(); }

private:
    double m_origin = 0.0;
    ChunkedColumn<float> m_offsets;
};

class MinMaxColumn
{
public:
    static constexpr std::size_t kBaseShift = 4; // the pyramid's first level: blocks of 16 points
    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

    std::size_t size() const { return m_values.size(); }
    double operator[](std::size_t i) const { return m_values[i]; }
    void push_back(double value);
    void truncate(std::size_t count);
    void clear();
    // The indices of the smallest and of the largest finite value in [first, last) (the first of equal
    // ones); {kNone, kNone} when none is finite.
    std::pair<std::size_t, std::size_t> extremes(std::size_t first, std::size_t last) const;
    // The pyramid's levels (level l holds the complete blocks of 16 << l points) and the extremes of
    // one block, as extremes() gives them: O(1).
    std::size_t levels() const { return m_levels.size(); }
    static std::size_t blockSize(std::size_t level) { return std::size_t(1) << (kBaseShift + level); }
    std::pair<std::size_t, std::size_t> blockExtremes(std::size_t level, std::size_t block) const
    {
        const Block b = m_levels[level][block];
        if (b.low == kNoIndex) return {kNone, kNone};
        return {b.low, b.high};
    }
    std::size_t blockCount(std::size_t level) const { return m_levels[level].size(); }
    std::size_t memoryBytes() const;

private:
    struct Block
    {
        std::uint32_t low, high; // indices; kNoIndex when the block has no finite value
    };
    static constexpr std::uint32_t kNoIndex = 0xffffffffu;

    void merge(Block* into, const Block& block) const;
    void mergeIndex(Block* into, std::size_t index) const;

    ChunkedColumn<float> m_values;
    std::vector<ChunkedColumn<Block>> m_levels; // level l: blocks of 16 << l points (chunked: no vector's doubling)
};

} // namespace ringmaster::ui
