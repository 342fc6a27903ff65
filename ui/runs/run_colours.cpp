#include "ui/runs/run_colours.h"

#include <QFileInfo>

#include <algorithm>
#include <array>

#include "runs/run_record.h"

namespace ringmaster::ui {
namespace {

// Tableau 10 (as the charts' own cycle): distinct in hue and readable on white.
const std::array<QColor, 10> kPalette{QColor(31, 119, 180), QColor(255, 127, 14), QColor(44, 160, 44), QColor(214, 39, 40),
                                      QColor(148, 103, 189), QColor(140, 86, 75), QColor(227, 119, 194), QColor(127, 127, 127),
                                      QColor(188, 189, 34), QColor(23, 190, 207)};

// FNV-1a over the name's UTF-8 bytes: the same on every machine and Qt version (qHash is not promised to be).
std::size_t paletteIndexOf(const QString& dirName)
{
    quint32 hash = 2166136261u;
    for (const char byte : dirName.toUtf8()) {
        hash ^= static_cast<quint8>(byte);
        hash *= 16777619u;
    }
    return hash % kPalette.size();
}

QString dirNameOf(const runs::RunRecord& run)
{
    return run.name.isEmpty() ? QFileInfo(run.path).fileName() : run.name;
}

} // namespace

QColor automaticRunColour(const QString& dirName) { return kPalette[paletteIndexOf(dirName)]; }

QColor runColour(const runs::RunRecord& run)
{
    const QColor chosen(run.colour);
    return !run.colour.isEmpty() && chosen.isValid() ? chosen : automaticRunColour(dirNameOf(run));
}

QList<QColor> compareColours(const QList<runs::RunRecord>& runs)
{
    std::array<bool, kPalette.size()> taken{};
    // The users' colours first: they are never moved, and an automatic colour avoids them.
    for (const runs::RunRecord& run : runs) {
        for (std::size_t i = 0; i < kPalette.size(); ++i) {
            if (!run.colour.isEmpty() && QColor(run.colour) == kPalette[i]) taken[i] = true;
        }
    }
    // By directory name, not by the order given: the same runs get the same colours however the table is sorted.
    QList<int> order;
    for (int i = 0; i < runs.size(); ++i) order << i;
    std::stable_sort(order.begin(), order.end(), [&runs](int a, int b) { return dirNameOf(runs[a]) < dirNameOf(runs[b]); });
    QList<QColor> colours(runs.size());
    for (const int i : order) {
        const runs::RunRecord& run = runs[i];
        if (!run.colour.isEmpty() && QColor(run.colour).isValid()) {
            colours[i] = QColor(run.colour);
            continue;
        }
        std::size_t index = paletteIndexOf(dirNameOf(run));
        for (std::size_t tries = 0; tries < kPalette.size() && taken[index]; ++tries) index = (index + 1) % kPalette.size();
        taken[index] = true;   // with more runs than colours, the last ones share
        colours[i] = kPalette[index];
    }
    return colours;
}

} // namespace ringmaster::ui
