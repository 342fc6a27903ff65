#include "run_index.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>
#include <sys/stat.h>

#include "run_files.h"

namespace ringmaster::runs {
namespace {

// What the index remembers of each source file; absent files are recorded as such.
QJsonObject fingerprintOf(const QDir& dir)
{
    QJsonObject files;
    for (const QString& name : recordSourceFiles()) {
        struct stat info {};
        const QByteArray path = QFile::encodeName(dir.filePath(name));
        if (::stat(path.constData(), &info) != 0) {
            files.insert(name, QJsonValue(QJsonValue::Null));
            continue;
        }
        const qint64 mtimeNs = static_cast<qint64>(info.st_mtim.tv_sec) * 1000000000LL + info.st_mtim.tv_nsec;
        // As strings: a JSON double holds only 53 bits, and nanoseconds since 1970 need more.
        files.insert(name, QJsonObject{{QStringLiteral("size"), QString::number(static_cast<qint64>(info.st_size))},
                                       {QStringLiteral("mtime_ns"), QString::number(mtimeNs)}});
    }
    return files;
}

void saveIndex(const QDir& dir, const QJsonObject& files, const RunRecord& record)
{
    QJsonObject stored = record.toJson();
    stored.remove(QStringLiteral("name"));   // the folder's own name and path win: runs get renamed and moved
    stored.remove(QStringLiteral("path"));
    const QJsonObject index{{QStringLiteral("format"), kIndexFormat}, {QStringLiteral("files"), files},
                            {QStringLiteral("record"), stored}};
    // Written to a temporary name and renamed over the old index, without fsync: it is a cache, and a torn
    // one (after a power cut) is invalid JSON or mismatched and simply rebuilt. fsync made a cold listing
    // of 1,000 runs wait seconds on the disk.
    const QString path = dir.filePath(QString::fromLatin1(kIndexFile));
    const QString temporary = path + QStringLiteral(".tmp-") + QString::number(QCoreApplication::applicationPid());
    QFile file(temporary);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) return;
    const QByteArray bytes = QJsonDocument(index).toJson(QJsonDocument::Compact);
    const bool written = file.write(bytes) == bytes.size() && file.flush();
    file.close();
    if (!written || std::rename(QFile::encodeName(temporary).constData(), QFile::encodeName(path).constData()) != 0) {
        QFile::remove(temporary);
    }
}

} // namespace

RunRecord loadRunRecord(const QString& dirPath, IndexUse* use)
{
    const QDir dir(dirPath);
    const QJsonObject files = fingerprintOf(dir);
    QFile indexFile(dir.filePath(QString::fromLatin1(kIndexFile)));
    if (indexFile.open(QIODevice::ReadOnly)) {
        const QJsonObject index = QJsonDocument::fromJson(indexFile.readAll()).object();
        if (index.value(QStringLiteral("format")).toInt() == kIndexFormat && index.value(QStringLiteral("files")).toObject() == files &&
            index.value(QStringLiteral("record")).isObject()) {
            RunRecord record = RunRecord::fromJson(index.value(QStringLiteral("record")).toObject());
            record.path = dirPath;
            record.name = QFileInfo(QDir::cleanPath(dirPath)).fileName();
            if (use) *use = IndexUse::Fresh;
            return record;
        }
    }
    RunRecord record = readRunRecord(dirPath);
    saveIndex(dir, files, record);
    if (use) *use = IndexUse::Rebuilt;
    return record;
}

} // namespace ringmaster::runs
