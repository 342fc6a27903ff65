#include "run_listing.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>

#include "run_files.h"
#include "run_index.h"

namespace ringmaster::runs {

QList<RunRecord> listRuns(const QStringList& roots)
{
    for (const QString& root : roots) {
        const QFileInfo info(root);
        if (!info.exists()) throw RunsError(QStringLiteral("--root %1: no such folder: give the folder your runs are in (the launcher's --output-root)").arg(root));
        if (!info.isDir()) throw RunsError(QStringLiteral("--root %1 is a file: give the folder your runs are in").arg(root));
    }
    QList<RunRecord> runs;
    for (const QString& root : roots) {
        const QDir rootDir(root);
        const QStringList children = rootDir.entryList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden, QDir::Name);
        for (const QString& child : children) {
            const QString path = QDir::cleanPath(rootDir.absoluteFilePath(child));
            if (!isRunDirectory(path)) continue;
            runs.append(loadRunRecord(path));
        }
    }
    std::stable_sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) {
        if (a.started.isValid() != b.started.isValid()) return a.started.isValid();
        if (a.started != b.started) return a.started < b.started;
        return a.name < b.name;
    });
    return runs;
}

} // namespace ringmaster::runs
